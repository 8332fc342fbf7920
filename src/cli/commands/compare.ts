import { retryDifference } from '../../suites/retry-label.js';
import { Command } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { compare } from '../../core/compare.js';
import { JoulebenchError } from '../../core/errors.js';
import { checkGate, GATE_METRICS, gateWhyNa, parseGate, type GateCondition, type GateFailure } from '../../core/gate.js';
import { renderComparisonMarkdown } from '../../report/markdown.js';
import { renderComparisonTable } from '../../report/table.js';
import type { CliIO } from '../io.js';
import { writeOutputFile } from '../output-file.js';
import type { LoadBlock } from '../../load/block.js';
import { planOutput, writeByExtension } from '../outputs.js';
import { loadRunsForCli, warnAboutInputs } from '../load-runs.js';
import { intAtLeast, probability, UNIT_LIMIT_HELP, unitLimit } from '../options.js';
import { DEFAULT_BOOTSTRAP_MAX_UNITS } from '../../stats/bootstrap.js';
import { withPairedStats } from '../../core/paired-compare.js';

interface CompareFlags {
  baseline?: string;
  candidate?: string;
  out?: string;
  quiet?: boolean;
  force?: boolean;
  md?: boolean;
  json?: boolean;
  failOn?: string;
  significant?: boolean;
  alpha: number;
  bootstrap: number;
  bootstrapMaxUnits?: number | 'inf';
}

export function compareCommand(io: CliIO): Command {
  return new Command('compare')
    .description('compare two runs: J/correct, $/correct, total $ and p95 latency as % change, accuracy as a point difference, each with its paired interval and verdict')
    .argument('[runs...]', 'baseline then candidate, instead of -b/-c')
    .option('-b, --baseline <run>', "the baseline: a report JSON, a results JSONL, a history run id (12, #12, last), or a repeated load run's document (run --runs N -o X.json: paired run by run)")
    .option('-c, --candidate <run>', 'the candidate: a report JSON, a results JSONL or a history run id')
    .option('-o, --out <file>', 'write the comparison here; the extension picks the format: .json, .md, .csv, .jsonl, .txt (default: JSON on stdout, the table on stderr)')
    .option('--md', 'print the comparison as Markdown (for a PR) instead of JSON')
    .option('--json', 'print the comparison as JSON (the default), with the paired intervals, p-value and verdicts')
    .option('--fail-on <conditions>', `exit 1 when a threshold is crossed, e.g. 'joules_per_correct_pct>5,accuracy_pp_delta<-1' (metrics: ${GATE_METRICS.join(', ')})`)
    .option('--significant', 'with --fail-on: trip only when the whole interval (at 1 − alpha) is past the threshold')
    .option('--alpha <a>', 'significance level for the paired tests and intervals', probability, 0.05)
    .option('--bootstrap <n>', 'paired bootstrap resamples', intAtLeast(0), 2000)
    .option('--bootstrap-max-units <n>', `paired cases: ${UNIT_LIMIT_HELP} (default: ${DEFAULT_BOOTSTRAP_MAX_UNITS})`, unitLimit)
    .option('--force', 'compare even when the two runs asked different cases (different suite digests)')
    .option('-q, --quiet', 'no table')
    .action(async (positional: string[], flags: CompareFlags) => {
      // A malformed gate is the user's mistake: refuse it (exit 2) before reading anything.
      const gate: GateCondition[] | null = flags.failOn !== undefined ? parseGate(flags.failOn) : null;
      if (flags.md && flags.json) throw new JoulebenchError('E_USAGE', '--md and --json: choose one output');
      if (flags.significant && !gate) throw new JoulebenchError('E_USAGE', '--significant applies to --fail-on');
      const [baseSpec, candSpec] = sides(positional, flags);
      const { isLoadRepeatsFile } = await import('../../load/repeats.js');
      const repeats = [baseSpec, candSpec].map(isLoadRepeatsFile);
      if (repeats[0] || repeats[1]) return compareLoadRepeats(io, baseSpec, candSpec, repeats as [boolean, boolean], flags, gate !== null);
      if (flags.out) planOutput(flags.out, ['json', 'md', 'csv', 'jsonl', 'txt']);
      // The paired statistics read seven figures a case: those are kept, not the cases (flat memory on a big run).
      const [base, cand] = await loadRunsForCli([baseSpec, candSpec], true, { cases: false, paired: true });
      warnAboutInputs(io, [base!, cand!]);
      const bd = base!.report.suite?.digest;
      const cd = cand!.report.suite?.digest;
      if (bd && cd && bd !== cd) {
        // Same cases asked under a different retry policy (`…/retry-N`): say exactly that.
        const retry = retryDifference(base!.report.suite?.version, cand!.report.suite?.version);
        const bs = base!.report.suite;
        const cs = cand!.report.suite;
        // The same suite at two versions (an MMLU file revised, say): name both versions, not only "different cases".
        // (A subset — `+filter=…`, `+limit=…` — is different cases, said as such.)
        const subset = (v: string | undefined) => (v ?? '').slice((v ?? '').indexOf('+') + 1 || (v ?? '').length);
        const versions =
          !retry && bs?.name !== undefined && bs.name === cs?.name && bs.version !== cs.version && subset(bs.version) === subset(cs.version)
            ? `suite ${bs.name} at version ${bs.version} and at version ${cs.version}`
            : null;
        const why = retry
          ? `${base!.origin} and ${cand!.origin}: ${retry} (suite versions ${bs!.version} and ${cs!.version})`
          : versions
            ? `${base!.origin} and ${cand!.origin} ran ${versions}: the suite versions differ (suite digests ${bd.slice(0, 19)}… and ${cd.slice(0, 19)}…)`
            : `${base!.origin} and ${cand!.origin} ran different cases (suite digests ${bd.slice(0, 19)}… and ${cd.slice(0, 19)}…)`;
        if (!flags.force) throw new JoulebenchError('E_INPUT', `${why}: not comparable (pass --force to compare anyway)`);
        io.err(`warning: ${why}; both runs' figures shown (--force), with no change, interval, p-value or verdict between them (withheld)\n`);
      }
      const result = withPairedStats(
        compare(base!.report, cand!.report),
        { digest: bd, results: base!.results, paired: base!.paired ?? null },
        { digest: cd, results: cand!.results, paired: cand!.paired ?? null },
        { alpha: flags.alpha, resamples: flags.bootstrap, ...(flags.bootstrapMaxUnits !== undefined ? { maxUnits: flags.bootstrapMaxUnits } : {}) },
      );
      if (result.energy_sources_match === false) {
        io.err(
          `warning: energy was measured differently (${result.baseline.energy_source} vs ${result.candidate.energy_source}): ` +
            'joules_per_correct_pct is null, not a change\n',
        );
      }
      const failures: GateFailure[] | null = gate ? checkGate(result, gate, flags.significant ? { significant: result.gate_intervals } : { why: gateWhyNa(result) }) : null;
      const md = () => renderComparisonMarkdown(result, { baseline: base!.label, candidate: cand!.label, gate: failures });
      if (flags.out) {
        await writeByExtension(flags.out, {
          json: () => prettyJson(result),
          md,
          csv: async () => (await import('../../report/csv.js')).comparisonCsv(result),
          jsonl: () => JSON.stringify(result) + '\n',
          txt: () => renderComparisonTable(result),
        });
        if (!flags.quiet) io.err(renderComparisonTable(result));
      } else if (flags.md) {
        io.out(md());
      } else {
        io.out(prettyJson(result));
        if (!flags.quiet) io.err(renderComparisonTable(result));
      }
      if (failures && failures.length > 0) {
        throw new JoulebenchError('E_GATE', `gate failed: ${failures.map((f) => f.message).join('; ')}`);
      }
      if (failures && !flags.quiet) io.err(`gate passed: ${gate!.map((g) => g.text).join(', ')}\n`);
    });
}

/**
 * Two repeated load runs (`run --request-rate R --runs N -o X.json` documents): each run's figures are
 * rebuilt from its results file, and run i of the baseline is paired with run i of the candidate.
 */
async function compareLoadRepeats(io: CliIO, baseSpec: string, candSpec: string, repeats: [boolean, boolean], flags: CompareFlags, gated: boolean): Promise<void> {
  if (!repeats[0] || !repeats[1]) {
    const [doc, other] = repeats[0] ? [baseSpec, candSpec] : [candSpec, baseSpec];
    throw new JoulebenchError('E_USAGE', `${doc} is a repeated load run and ${other} is not: compare pairs a repeated load run (run --runs N -o X.json) with another, run by run`);
  }
  if (flags.md || gated) throw new JoulebenchError('E_USAGE', `${flags.md ? '--md' : '--fail-on'} does not apply to repeated load runs: their comparison is JSON (stdout or -o FILE.json) and a table`);
  if (flags.out && planOutput(flags.out, ['json', 'md', 'csv', 'jsonl', 'txt']).format !== 'json') {
    throw new JoulebenchError('E_USAGE', `${flags.out}: the comparison of repeated load runs is written as .json only`);
  }
  const { existsSync } = await import('node:fs');
  const { loadRepeatsRunFiles, pairedRepeats } = await import('../../load/repeats.js');
  const { renderRepeatsComparisonTable } = await import('../../load/table.js');
  const side = async (spec: string) => {
    const runs = await loadRunsForCli(loadRepeatsRunFiles(spec, existsSync), false, { cases: false });
    warnAboutInputs(io, runs);
    return runs.map((r) => {
      const load = (r.report as { load?: LoadBlock }).load;
      if (!load) throw new JoulebenchError('E_INPUT', `${spec}: ${r.origin} is not a load run (its report has no load block)`);
      return { accuracy_pct: r.report.accuracy_pct, load, digest: r.report.suite?.digest };
    });
  };
  const base = await side(baseSpec);
  const cand = await side(candSpec);
  const digests = new Set([...base, ...cand].map((r) => r.digest));
  if (digests.size > 1) {
    const why = `${baseSpec} and ${candSpec} ran different cases (suite digests differ)`;
    if (!flags.force) throw new JoulebenchError('E_INPUT', `${why}: not comparable (pass --force to compare anyway)`);
    io.err(`warning: ${why}; compared anyway (--force)\n`);
  }
  const result = pairedRepeats(base, cand, 1 - flags.alpha);
  // The table carries the notes; quiet, they still reach a person (runs left out of the pairing).
  if (flags.quiet) for (const n of result.notes) io.err(`joulebench: ${n}\n`);
  if (flags.out) writeOutputFile(flags.out, prettyJson(result));
  else io.out(prettyJson(result));
  if (!flags.quiet) io.err(renderRepeatsComparisonTable(result));
}

function sides(positional: string[], flags: CompareFlags): [string, string] {
  const queue = [...positional];
  const b = flags.baseline ?? queue.shift();
  const c = flags.candidate ?? queue.shift();
  if (!b || !c) throw new JoulebenchError('E_USAGE', 'compare needs a baseline and a candidate (-b A -c B, or two arguments)');
  if (queue.length > 0) throw new JoulebenchError('E_USAGE', `compare takes two runs, got extra: ${queue.join(' ')}`);
  return [b, c];
}
