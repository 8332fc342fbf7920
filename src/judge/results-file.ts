import { renameSync, writeFileSync } from 'node:fs';
import { aggregate, reportContextOf, type BenchReport, type ReportContext } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader, Suite } from '../core/types.js';
import { checkReportHeader } from '../report/header-check.js';
import { compareCaseOrder } from '../runner/case-key.js';
import { caseLine } from '../runner/case-line.js';
import { readResultsFileText } from '../runner/results-file.js';
import { reportContextFromMeasures } from '../runner/run-measures.js';
import { suiteDigest } from '../suites/digest.js';
import type { Judge } from './judge.js';
import { judgeResults, type JudgeTally } from './score.js';
import { mtBenchBlock, type JudgeInfo, type MtBenchBlock } from './summary.js';
import type { PowerTraceSummary } from '../core/energy.js';
import { tracedBy } from '../runner/power-trace-line.js';

/** A judged results file: its header, scored results, the judging tally and the re-aggregated report. */
interface JudgedRun {
  header: ResultsHeader;
  results: CaseResult[];
  tally: JudgeTally;
  report: BenchReport & MtBenchBlock;
}

/** A results file read whole for judging: its text (the judged file is rewritten from it) and its lines. */
type ResultsRead = ReturnType<typeof readResultsFileText>;

/** Reads a results file (unless `read` is given) and checks it was written for `suite` (the judge needs its questions). */
export function readResultsForSuite(
  path: string,
  suite: Suite,
  read: ResultsRead = readResultsFileText(path),
): { header: ResultsHeader; results: CaseResult[]; other: Record<string, unknown>[]; text: string } {
  const { text, contents } = read;
  if (!contents.header) throw new JoulebenchError('E_RESULTS', `${path}: results file has no header line`);
  const digest = suiteDigest(suite);
  if (contents.header.suite_digest !== digest) {
    throw new JoulebenchError(
      'E_RESULTS',
      `${path}: written for suite "${contents.header.suite}" ${contents.header.suite_digest}, the suite given is "${suite.name}" ${digest} (give the same questions and references)`,
    );
  }
  return { header: contents.header, results: contents.results, other: contents.other, text };
}

/**
 * Judges a results file's judged cases and writes it to `dest` (default: in place, by rename), with one `record: "judge"`
 * line; the report is re-aggregated with the energy basis of the file's last `run_measures` line (or `energy`).
 */
export async function judgeResultsFile(o: {
  path: string;
  suite: Suite;
  judge: Judge;
  info: JudgeInfo;
  energy?: ReportContext['energy'];
  onCase?: (done: number, total: number) => void;
  /** The file as the caller already read it (`rescore` reads it for its header first): not read again. */
  read?: ResultsRead;
  /** Where the judged file goes (default: over `path`, as a finished run's own judging does). */
  dest?: string;
}): Promise<JudgedRun> {
  const { header, results, other, text } = readResultsForSuite(o.path, o.suite, o.read);
  checkReportHeader(header, o.path); // before a judge is asked or the file rewritten
  // Checked now too, for the same reason: a malformed line must not cost judge requests first.
  const measures = other.findLast((l) => l.record === 'run_measures');
  const fromMeasures = measures ? reportContextFromMeasures(measures, o.path) : {};
  const traced = other.reduce<PowerTraceSummary | null>((t, l) => tracedBy(l, t, o.path), null);
  const cases = new Map(o.suite.cases.map((c) => [c.id, c]));
  const { results: judged, tally } = await judgeResults({
    results,
    cases,
    suiteScorer: o.suite.scorer,
    judge: o.judge,
    pass: o.info.pass,
    ...(o.onCase ? { onCase: o.onCase } : {}),
  });
  // Case lines in file order are replaced one for one; other lines stay where they were.
  const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n');
  lines.pop();
  let i = 0;
  const out: string[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    const rec = (JSON.parse(line) as { record?: unknown }).record;
    if (rec === 'case') out.push(caseLine(judged[i++]!));
    else if (rec !== 'judge') out.push(line);
  }
  out.push(JSON.stringify({ record: 'judge', ...o.info, temperature: 0, tally }));
  const dest = o.dest ?? o.path;
  const tmp = `${dest}.judging-${process.pid}`;
  writeFileSync(tmp, out.join('\n') + '\n');
  renameSync(tmp, dest);

  const scored = judged.filter((r) => r.phase === 'scored');
  const ctx: ReportContext = {
    ...reportContextOf(header),
    ...fromMeasures,
    ...(o.energy ? { energy: o.energy } : {}),
  };
  // Aggregated in case order (phase, pass, index; file order for a repeated key), as the runner and
  // `report FILE` (src/report/rebuild.ts) do, not in the order a concurrent run wrote its lines: sums and
  // the bootstrap's draws depend on the order.
  const base = aggregate([...judged].sort(compareCaseOrder), ctx);
  // The run's trace where `report FILE` puts it: after the aggregate, before the MT-Bench block.
  return { header, results: scored, tally, report: { ...base, ...(traced ? { power_trace: traced } : {}), ...mtBenchBlock(scored, base, tally, o.info) } };
}
