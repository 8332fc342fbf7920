import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { aggregate, reportContextOf, type BenchReport, type ReportContext } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader, Suite } from '../core/types.js';
import { checkReportHeader } from '../report/header-check.js';
import { compareCaseOrder } from '../runner/case-key.js';
import { caseLine } from '../runner/case-line.js';
import { readResultsFile, streamResultLines, type ResultsFileContents } from '../runner/results-stream.js';
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

/** Reads a results file (unless `read` is given) and checks it was written for `suite` (the judge needs its questions). */
export function readResultsForSuite(
  path: string,
  suite: Suite,
  contents: ResultsFileContents = readResultsFile(path),
): { header: ResultsHeader; results: CaseResult[]; other: Record<string, unknown>[] } {
  if (!contents.header) throw new JoulebenchError('E_RESULTS', `${path}: results file has no header line`);
  const digest = suiteDigest(suite);
  if (contents.header.suite_digest !== digest) {
    throw new JoulebenchError(
      'E_RESULTS',
      `${path}: written for suite "${contents.header.suite}" ${contents.header.suite_digest}, the suite given is "${suite.name}" ${digest} (give the same questions and references)`,
    );
  }
  return { header: contents.header, results: contents.results, other: contents.other };
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
  /** The file's lines as the caller already read them (`rescore` reads it for its header first): not parsed again. */
  read?: ResultsFileContents;
  /** Where the judged file goes (default: over `path`, as a finished run's own judging does). */
  dest?: string;
}): Promise<JudgedRun> {
  const { header, results, other } = readResultsForSuite(o.path, o.suite, o.read);
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
  rewriteJudged(o.path, o.dest ?? o.path, judged, JSON.stringify({ record: 'judge', ...o.info, temperature: 0, tally }));

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

/**
 * Writes `src` to `dest` (by rename, so a crash leaves `src` as it was) with its case lines replaced one for one,
 * in file order, by `cases`, any earlier judge line dropped and `judgeLine` last; other lines are kept byte for
 * byte. Streamed: any size of file.
 */
function rewriteJudged(src: string, dest: string, cases: readonly CaseResult[], judgeLine: string): void {
  const tmp = `${dest}.judging-${process.pid}`;
  const fd = openSync(tmp, 'w');
  let i = 0;
  const changed = (): never => {
    throw new JoulebenchError('E_RESULTS', `${src}: the file changed while it was judged: its case lines no longer match`);
  };
  try {
    streamResultLines(src, {
      region: (buf, start, end) => {
        const out: string[] = [];
        for (const line of buf.toString('utf8', start, end).split('\n')) {
          if (line.trim() === '') continue;
          const rec = (JSON.parse(line) as { record?: unknown }).record;
          if (rec === 'case') out.push(caseLine(cases[i++] ?? changed()));
          else if (rec !== 'judge') out.push(line);
        }
        if (out.length > 0) writeSync(fd, out.join('\n') + '\n');
      },
    });
    if (i !== cases.length) changed();
    writeSync(fd, judgeLine + '\n');
    closeSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  renameSync(tmp, dest);
}
