import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import type { ReportInput } from '../../report/inputs.js';
import type { LoadBlock } from '../../load/block.js';
import { fileHead } from '../../load/sweep-file.js';
import type { SweepComparison } from '../../sweep/comparison.js';
import type { CliIO } from '../io.js';
import { ALL_FORMATS, planOutput, writeByExtension, type Renderings } from '../outputs.js';
import { checkOutputPath, writeOutputFile, type StreamedOutput } from '../output-file.js';
import type { CaseResult } from '../../core/types.js';
import { forEachScoredBatch } from '../../runner/scored-batches.js';
import { inputsFrontier } from '../../report/arms.js';
import { loadInputsForCli, warnAboutInputs } from '../load-runs.js';
import { HTML_CASE_ROWS } from '../../report/page-limits.js';

/** The text renderers, loaded on use (`report --json` needs none of them). */
async function textRenderers() {
  const [infer, code, markdown, table, csv, loadTable] = await Promise.all([
    import('../../infer/table.js'),
    import('../../report/code-table.js'),
    import('../../report/markdown.js'),
    import('../../report/table.js'),
    import('../../report/csv.js'),
    import('../../load/table.js'),
  ]);
  const { renderCodeMarkdown, renderInferMarkdown, renderReportMarkdown } = markdown;
  return {
    csv,
    markdownOf(r: ReportInput): string {
      if (r.kind === 'code') return renderCodeMarkdown(r.results, { title: `joulebench code · ${r.label}` });
      if (r.kind === 'infer') return renderInferMarkdown(r.label, r.file);
      return renderReportMarkdown(r.report, { title: `joulebench · ${r.label}`, receipt: r.receipt });
    },
    tableOf(r: ReportInput): string {
      if (r.kind === 'code') return code.renderCodeTable(r.results);
      if (r.kind === 'infer') return infer.renderInferTable([{ path: r.label, file: r.file }]);
      const load = (r.report as { load?: LoadBlock }).load;
      return table.renderReportTable(r.report) + (load ? loadTable.renderLoadTable(load) : '');
    },
  };
}

/** The HTML page, loaded on use: only it reads the 1 MB chart bundle. */
async function buildHtml(runs: ReportInput[], comparisons: SweepComparison[] = []): Promise<string> {
  const { buildHtmlReport } = await import('../../report/html/index.js');
  return buildHtmlReport(runs, new Date(), comparisons);
}

/** Every format `report -o` writes. */
function renderings(runs: ReportInput[], flags: ReportFlags, comparisons: SweepComparison[] = []) {
  const json = () => (runs.length === 1 ? prettyJson(documentOf(runs[0]!)) : prettyJson(runs.map((r) => ({ label: r.label, kind: r.kind, report: documentOf(r) }))));
  // One line per case, datapoint or arm; a suite run's cases are read again from its results file as they are written out.
  const perCaseJsonl: StreamedOutput = {
    stream: (write) => {
      for (const r of runs) {
        const line = (row: object) => JSON.stringify({ run: r.label, kind: r.kind, ...row }) + '\n';
        if (r.kind === 'suite') forEachScored(r, (batch) => write(batch.map(line).join('')));
        else write((r.kind === 'code' ? r.results.datapoints : r.file.arms).map(line).join(''));
      }
    },
  };
  return {
    json,
    md: async () => runs.map((await textRenderers()).markdownOf).join('\n'),
    html: () => buildHtml(runs, comparisons),
    csv: async () => {
      const { armsCsv, datapointsCsv } = (await textRenderers()).csv;
      if (!flags.cases) {
        const f = inputsFrontier(runs);
        return armsCsv(f.arms, f, f.arm_kinds);
      }
      const suites = runs.filter((r) => r.kind === 'suite');
      const codes = runs.filter((r) => r.kind === 'code');
      if (suites.length && codes.length) throw new JoulebenchError('E_USAGE', '--cases CSV: suite runs and code results have different columns; write them to two files');
      if (runs.some((r) => r.kind === 'infer')) throw new JoulebenchError('E_USAGE', '--cases CSV: an infer run file has no cases; use report -o FILE.json');
      if (codes.length) return datapointsCsv(codes.map((r) => ({ label: r.label, datapoints: r.results.datapoints })));
      const missing = suites.filter((r) => r.kind === 'suite' && !r.results_path && r.results === null).map((r) => r.origin);
      if (missing.length) throw new JoulebenchError('E_INPUT', `--cases: no per-case results for ${missing.join(', ')} (its .results.jsonl is not beside it)`);
      const { casesCsvHeader, casesCsvRows } = (await textRenderers()).csv;
      return {
        stream: (write) => {
          write(casesCsvHeader());
          for (const r of suites) if (r.kind === 'suite') forEachScored(r, (batch) => write(casesCsvRows(r.label, batch)));
        },
      };
    },
    jsonl: () => (flags.cases ? perCaseJsonl : inputsFrontier(runs).arms.map((a) => JSON.stringify(a)).join('\n') + '\n'),
    txt: async () => runs.map((await textRenderers()).tableOf).join('\n'),
  } satisfies Renderings;
}

interface ReportFlags {
  cases?: boolean;
  cluster?: 'question' | 'subject';
  html?: string;
  md?: boolean;
  json?: boolean;
  out?: string;
}

export function reportCommand(io: CliIO): Command {
  return new Command('report')
    .description('show one or more runs: a terminal table, Markdown for a PR (--md), or one self-contained HTML page (--html)')
    .argument('<runs...>', 'report JSON files, results JSONL files, `code` results, `infer` run files, history run ids (12, #12, last), or FastChat judgments (gpt-4_single.jsonl: the per-model table)')
    .option('--html <file>', 'write a self-contained HTML report (charts inlined, no network)')
    .option('--md', 'print Markdown instead of the terminal table')
    .option('--json', 'print the report JSON (aggregated, for a results file or a run id)')
    .option('-o, --out <file>', 'write here; the extension picks the format: .json, .md, .html, .csv (one row per arm; --cases: per case), .jsonl, .txt')
    .option('--cases', 'with -o FILE.csv or .jsonl: one row per case (suite runs) or per datapoint (code) instead of per arm')
    .addOption(new Option('--cluster <by>', "rebuild each suite run from its results file with the intervals resampling clusters, as run --cluster does: question or subject").choices(['question', 'subject']))
    .action(async (specs: string[], flags: ReportFlags) => {
      if (flags.md && flags.json) throw new JoulebenchError('E_USAGE', '--md and --json are exclusive');
      // FastChat's published judgments print show_result.py's per-model table, with any judged runs of ours beside it.
      const judgments = specs.filter(isFastChatJudgments);
      if (judgments.length > 0) return leaderboardReport(io, judgments, specs, flags);
      const plan = flags.out ? planOutput(flags.out, ALL_FORMATS) : null;
      if (flags.html) checkOutputPath(flags.html, '--html');
      // A sweep folder stands for its arms' runs, plus the sweep's comparison.
      const { isSweepDir } = await import('../../sweep/state.js');
      // A rate sweep's document (run --request-rate R1,R2 -o SWEEP.json) stands for its runs, one per rate.
      const { isRateSweepFile, rateSweepRunFiles } = await import('../../load/sweep-file.js');
      const rateDocs = specs.filter(isRateSweepFile);
      if (rateDocs.length > 0) specs = specs.flatMap((s) => (rateDocs.includes(s) ? rateSweepRunFiles(s, existsSync) : [s]));
      // Only the HTML page keeps cases, and only the first it shows (the rest stream past, counted);
      // --cases reads each run's results file again as it writes the rows. Memory stays flat either way.
      const html = flags.html !== undefined || plan?.format === 'html';
      const sweepDirs = specs.filter(isSweepDir);
      if (flags.cluster !== undefined && sweepDirs.length > 0) {
        throw new JoulebenchError('E_USAGE', `${sweepDirs[0]}: --cluster does not re-cluster a sweep folder (set cluster in the sweep plan, or report an arm's results file with --cluster)`);
      }
      const sweeps = sweepDirs.length > 0 ? await sweepInputs(sweepDirs, html) : { runs: [], comparisons: [] };
      const cluster = flags.cluster !== undefined ? { cluster: flags.cluster } : {};
      const runs = [...(await loadInputsForCli(specs.filter((s) => !sweepDirs.includes(s)), true, html ? { cases: true, casesLimit: HTML_CASE_ROWS, ...cluster } : { cases: false, ...cluster })), ...sweeps.runs];
      // On stderr whatever the format: a report of a run that did not finish must not pass for a whole one.
      warnAboutInputs(io, runs);
      if (flags.html) writeOutputFile(flags.html, await buildHtml(runs, sweeps.comparisons), plan ? '--html' : 'output');
      if (flags.out && plan) {
        const format = await writeByExtension(flags.out, renderings(runs, flags, sweeps.comparisons));
        io.err(`${format.padEnd(7)} ${flags.out}\n`);
        return;
      }
      if (flags.html) io.err(`html    ${flags.html}\n`);
      // (no -o: stdout)
      if (flags.json || flags.md) {
        io.out(await renderings(runs, flags)[flags.json ? 'json' : 'md']());
      } else if (!flags.html) {
        const { renderSweepTable } = await import('../../report/sweep-table.js');
        const { tableOf } = await textRenderers();
        const text = [...sweeps.comparisons.map((c) => renderSweepTable(c)), ...runs.filter((r) => !sweeps.runs.includes(r)).map(tableOf)].join('\n');
        io.out(rateDocs.length > 0 ? text + '\n' + (await rateCurveTables(runs)) : text);
      }
    });
}

async function leaderboardReport(io: CliIO, judgments: string[], specs: string[], flags: ReportFlags): Promise<void> {
  if (judgments.length > 1) throw new JoulebenchError('E_USAGE', `one judgments file at a time (${judgments.join(', ')})`);
  if (flags.md || flags.html || flags.out || flags.cluster) throw new JoulebenchError('E_USAGE', `${judgments[0]}: a judgments file prints its per-model table (or --json); --md, --html, -o and --cluster do not apply`);
  const { leaderboard } = await import('./rescore.js');
  const { json, text } = leaderboard(judgments[0]!, specs.filter((s) => s !== judgments[0]));
  io.out(flags.json ? json : text);
}

/** A suite run's scored cases a batch at a time, in file order: read again from its results file, or the cases in memory. */
function forEachScored(r: Extract<ReportInput, { kind: 'suite' }>, each: (batch: CaseResult[]) => void): void {
  if (r.results_path) forEachScoredBatch(r.results_path, each);
  else if (r.results) each(r.results);
}

/** Each rate curve among the runs as a table (runs of one system at several rates). */
async function rateCurveTables(runs: ReportInput[]): Promise<string> {
  const [{ rateCurvesOf }, { renderCurveTable }] = await Promise.all([import('../../report/html/rate-section.js'), import('../../load/table.js')]);
  const suites = runs.flatMap((r) => (r.kind === 'suite' ? [r] : []));
  return rateCurvesOf(suites).map((c) => `${c.title}\n${renderCurveTable(c.points)}`).join('\n');
}

/** The document behind an input: the suite report, the code results, or the infer run file. */
function documentOf(r: ReportInput): unknown {
  return r.kind === 'suite' ? r.report : r.kind === 'code' ? r.results : r.file;
}

/** The runs of sweep folders as report inputs (labelled by arm, and suite when a sweep has several), with each sweep's comparison. */
export async function sweepInputs(dirs: readonly string[], html: boolean): Promise<{ runs: ReportInput[]; comparisons: SweepComparison[] }> {
  const [{ loadSweep, compareSweep }, { readJsonIfExists }] = await Promise.all([import('../../sweep/load.js'), import('../../report/inputs.js')]);
  const runs: ReportInput[] = [];
  const comparisons: SweepComparison[] = [];
  for (const dir of dirs) {
    // For the page: each arm's first cases (and the counts and latencies of all), read in the pass that pairs it.
    const loaded = loadSweep(dir, html ? { casesLimit: HTML_CASE_ROWS } : {});
    const many = loaded.state.plan.suites.length > 1;
    for (const r of loaded.runs) {
      const entry = loaded.state.runs.find((e) => e.arm === r.arm && e.suite === r.suite)!;
      const cases = r.cases ?? null;
      runs.push({
        kind: 'suite',
        label: many ? `${r.arm} · ${r.suite}` : r.arm,
        origin: entry.report,
        report: r.report,
        results: cases ? cases.results : null,
        ...(cases ? { header: cases.header, scored_total: cases.scored_total, case_latency_ms: cases.case_latency_ms } : {}),
        results_path: r.results_path ?? null,
        receipt: readJsonIfExists(entry.receipt, entry.report),
        run_id: entry.history_id,
      });
    }
    comparisons.push(compareSweep(loaded));
  }
  return { runs, comparisons };
}

/** Whether a file is a FastChat judgments JSONL: its first line has `question_id`, `judge`, `score` and `turn` (and is no results line). */
function isFastChatJudgments(path: string): boolean {
  if (!/\.jsonl$/i.test(path)) return false;
  try {
    const row = JSON.parse(fileHead(path, 64 * 1024).toString('utf8').split('\n')[0] ?? '') as Record<string, unknown>;
    return row.record === undefined && 'question_id' in row && Array.isArray(row.judge) && 'score' in row && 'turn' in row;
  } catch {
    return false;
  }
}
