import { Command, InvalidArgumentError } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { quote } from '../../core/one-line.js';
import { readResultsFile } from '../../runner/results-stream.js';
import { fmtJoules, fmtPct, table } from '../../report/format.js';
import { pilotCasesOf, powerPlan, type PowerPlan } from '../../stats/power.js';
import type { CliIO } from '../io.js';
import { probability } from '../options.js';

interface PowerFlags {
  accuracyPp?: number[];
  joulesPct?: number[];
  alpha: number;
  power: number;
  json?: boolean;
}

/** A comma-separated list of numbers in (0, max]. */
function differences(max: number): (v: string) => number[] {
  return (v) =>
    v.split(',').map((s) => {
      const n = Number(s.trim());
      if (s.trim() === '' || !(n > 0 && n <= max)) throw new InvalidArgumentError(`must be numbers > 0 and <= ${max}, comma-separated, got ${quote(v)}`);
      return n;
    });
}

export function powerCommand(io: CliIO): Command {
  return new Command('power')
    .description('plan a paired comparison from a pilot run: the cases needed to detect an accuracy and an energy difference, and their time and joules')
    .argument('<results>', "the pilot run's results JSONL")
    .argument('[candidate]', "a candidate's pilot results JSONL on the same suite: its discordance and per-case energy differences are used instead of assumed")
    .option('--accuracy-pp <d>', 'accuracy differences to detect, percentage points (comma-separated, e.g. 2,5)', differences(100))
    .option('--joules-pct <p>', "energy differences to detect, % of the pilot's mean joules per case (comma-separated)", differences(1e6))
    .option('--alpha <a>', 'two-sided significance level', probability, 0.05)
    .option('--power <p>', 'chance of detecting the difference when it is there', probability, 0.8)
    .option('--json', 'print the plan as JSON')
    .action((results: string, candidate: string | undefined, flags: PowerFlags) => {
      if (!flags.accuracyPp && !flags.joulesPct) throw new JoulebenchError('E_USAGE', 'power needs --accuracy-pp D and/or --joules-pct P: the differences to detect');
      const base = readResultsFile(results);
      const cand = candidate !== undefined ? readResultsFile(candidate) : null;
      if (cand && base.header && cand.header && base.header.suite_digest !== cand.header.suite_digest) {
        throw new JoulebenchError('E_INPUT', `${candidate}: suite digest differs from ${results}'s: the pilots asked different questions, so they cannot be paired`);
      }
      const baseCases = pilotCasesOf(base.results);
      if (baseCases.length === 0) throw new JoulebenchError('E_INPUT', `${results}: no scored case: nothing to plan from`);
      const candCases = cand ? pilotCasesOf(cand.results) : null;
      if (candCases && !candCases.some((c) => baseCases.some((b) => b.key === c.key))) throw new JoulebenchError('E_INPUT', `${candidate}: no scored case in common with ${results}`);
      const plan = powerPlan(baseCases, candCases, { accuracyPp: flags.accuracyPp ?? [], joulesPct: flags.joulesPct ?? [], alpha: flags.alpha, power: flags.power });
      io.out(flags.json ? prettyJson({ format: 'joulebench-power/1', pilot: results, candidate: candidate ?? null, ...plan }) : renderPlan(plan, results));
    });
}

function renderPlan(p: PowerPlan, path: string): string {
  const lines: string[] = [];
  const rate = [
    p.baseline_accuracy === null ? 'accuracy n/a' : `accuracy ${fmtPct(p.baseline_accuracy * 100)}`,
    `${fmtJoules(p.mean_joules_per_case)} a case`,
    p.mean_latency_ms_per_case === null ? null : `${(p.mean_latency_ms_per_case / 1000).toFixed(2)} s a case`,
  ].filter(Boolean);
  lines.push(`joulebench power · pilot ${path} (${p.pilot_cases} cases, ${rate.join(', ')}) · α ${p.alpha} two-sided · power ${p.power}${p.paired_pilot ? ' · paired pilot' : ''}`);
  lines.push('');
  const rows = [['difference', 'cases', 'test', 'from the pilot']];
  for (const r of p.rows) {
    rows.push([
      r.figure === 'accuracy' ? `accuracy ${r.difference} pp` : `joules ${r.difference} %`,
      r.cases === null ? 'n/a' : String(r.cases),
      r.figure === 'accuracy' ? 'McNemar (Connor 1987)' : 'paired t (normal approx. + Guenther)',
      r.reason ?? r.assumption,
    ]);
  }
  lines.push(table(rows, ['l', 'r', 'l', 'l']));
  lines.push('');
  if (p.cases_needed !== null) {
    const time = p.seconds_per_system === null ? 'time unknown' : `≈ ${fmtDuration(p.seconds_per_system)} one case at a time`;
    lines.push(`  ${p.cases_needed} cases, asked of both systems: per system ${time} and ${fmtJoules(p.joules_per_system)} at the pilot's rates`);
  }
  lines.push('  cases = pairs; with a suite smaller than that, --repeat does not substitute: repeats of a case are not independent cases');
  if (!p.paired_pilot) lines.push('  one pilot: discordance and energy-difference SD assumed (independent systems); give a candidate pilot to measure them');
  lines.push('  formulas and sources: docs/statistics.md#sample-size-planning-joulebench-power');
  return lines.join('\n') + '\n';
}

function fmtDuration(s: number): string {
  if (s < 120) return `${s.toFixed(0)} s`;
  if (s < 7200) return `${(s / 60).toFixed(1)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
