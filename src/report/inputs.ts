import { closeSync, existsSync, readSync } from 'node:fs';
import { openRegularFile, readTextFile, utf8BomLength } from '../read-text.js';
import { basename } from 'node:path';
import type { BenchReport } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import { DATAPOINTS_FORMAT } from '../code/datapoints-file.js';
import type { CodeResults } from '../code/results.js';
import type { InferRunFile } from '../infer/protocol.js';
import { historyKind, type History, type HistoryEntry } from './history.js';
import type { PairedColumns } from '../stats/paired-columns.js';
import { rebuildReport, type KeepCases, type RebuiltRun } from './rebuild.js';
import { FirstCases, type CaseLatency } from './first-cases.js';

/** A run loaded for `report`, `frontier` or `compare`: from a report file, a results JSONL or the history. */
export interface LoadedRun {
  /** Unique among the loaded runs: the file's base name or `#id`. */
  label: string;
  /** Where it came from: a path, or `history #id`. */
  origin: string;
  report: BenchReport;
  /** Scored case results when known (a results file, or one found next to the report) and asked for (`LoadOptions.cases`). */
  results: CaseResult[] | null;
  /** The scored cases' paired figures, when asked for instead of the whole cases (`LoadOptions.paired`). */
  paired?: PairedColumns | null;
  receipt: Record<string, unknown> | null;
  run_id: number | null;
  /** The results file's header when one was read (the HTML report finds each case's prompt from it). */
  header?: ResultsHeader | null;
  /** With `LoadOptions.casesLimit`: the scored cases in the file (`results` holds the first ones), and their latency percentiles. */
  scored_total?: number;
  case_latency_ms?: CaseLatency;
  /** The results JSONL the run's cases are in, when there is one (`report --cases` streams it again). */
  results_path?: string | null;
  /** What a reader must be told about the input beside its figures (a run that did not finish); the CLI prints them. */
  warnings?: string[];
}

export type { CaseLatency } from './first-cases.js';

type InputOrigin = Pick<LoadedRun, 'label' | 'origin' | 'run_id'>;

/** A `joulebench code` results file (or its streamed datapoints JSONL) loaded for `report`/`frontier`. */
export type LoadedCode = InputOrigin & { kind: 'code'; results: CodeResults };

/** A `joulebench infer` run file loaded for `report`/`frontier`. */
export type LoadedInfer = InputOrigin & { kind: 'infer'; file: InferRunFile };

/** Any input `report` and `frontier` take: a suite run, a coding-agent results file, or an infer run file. */
export type ReportInput = ({ kind: 'suite' } & LoadedRun) | LoadedCode | LoadedInfer;

/** A run id on the command line: `12`, `#12` or `last` (when no file has that name). */
export function parseRunId(spec: string): number | 'last' | null {
  if (existsSync(spec)) return null;
  if (spec === 'last') return 'last';
  const m = /^#?(\d+)$/.exec(spec);
  return m ? Number(m[1]) : null;
}

/** The readers of inputs other than a results file, imported only when an input needs them ({@link readersFor}). */
export interface InputReaders {
  readCodeResults(path: string): CodeResults;
  summarizeResults(results: CodeResults): CodeResults['solvers'];
  readInferFile(path: string): InferRunFile;
  readReportFile(path: string): BenchReport;
}

/** A spec, and what it names: a file of some kind, or a history entry. */
export interface ResolvedSpec {
  spec: string;
  /** `results`: a results JSONL; `report`: a report JSON; `code`, `infer`: those files or history entries; `suite`: a suite run in the history. */
  kind: 'results' | 'report' | 'code' | 'infer' | 'suite';
  entry: HistoryEntry | null;
}

/** What each spec names (a file's kind from its first line or format; a run id's history entry). */
export function resolveSpecs(specs: readonly string[], history: History | null): ResolvedSpec[] {
  return specs.map((spec) => {
    const id = parseRunId(spec);
    if (id === null) return { spec, kind: fileKind(spec), entry: null };
    if (!history) throw new JoulebenchError('E_INPUT', `${spec}: no such file (run ids need the history, which is off)`);
    const entry = historyEntry(spec, id, history);
    const kind = historyKind(entry.kind);
    return { spec, kind: kind === 'code' || kind === 'infer' ? kind : 'suite', entry };
  });
}

/** The readers `resolved` needs, imported now; the others throw (a bug: a reader used that was not asked for). */
export async function readersFor(resolved: readonly ResolvedSpec[]): Promise<InputReaders> {
  const needs = (k: ResolvedSpec['kind'], fileOnly = true) => resolved.some((r) => r.kind === k && (!fileOnly || r.entry === null));
  const missing = (name: string) => (): never => {
    throw new Error(`internal: the ${name} reader was not loaded`);
  };
  const [code, aggregate, infer, report] = await Promise.all([
    needs('code') ? import('../code/results.js') : null,
    needs('code', false) ? import('../code/aggregate.js') : null,
    needs('infer') ? import('../infer/load.js') : null,
    needs('report') ? import('./load.js') : null,
  ]);
  return {
    readCodeResults: code?.readCodeResults ?? missing('code results'),
    summarizeResults: aggregate?.summarizeResults ?? missing('code aggregate'),
    readInferFile: infer?.readInferFile ?? missing('infer'),
    readReportFile: report?.readReportFile ?? missing('report'),
  };
}

/** Loads each resolved spec as a suite run (`compare`): a code or infer input is refused. */
export function loadRunsWith(readers: InputReaders, resolved: readonly ResolvedSpec[], opts: LoadOptions = {}): LoadedRun[] {
  return uniqueLabels(
    resolved.map((r) => {
      const input = loadInput(readers, r, opts);
      if (input.kind !== 'suite') {
        throw new JoulebenchError('E_REPORT', `${r.spec}: a joulebench ${input.kind} ${input.kind === 'code' ? 'results file' : 'run file'}, not a suite report (compare takes suite runs; show it with: joulebench report ${r.spec})`);
      }
      const { kind: _kind, ...run } = input;
      return run;
    }),
  );
}

/** Loads each resolved spec for `report` and `frontier`: suite runs, code results and infer run files. */
export function loadInputsWith(readers: InputReaders, resolved: readonly ResolvedSpec[], opts: LoadOptions = {}): ReportInput[] {
  return uniqueLabels(resolved.map((r) => loadInput(readers, r, opts)));
}

/** How much of a results file to keep. */
export interface LoadOptions {
  /** Keep every scored case (default true); with false a results file is aggregated as it streams past, in flat memory. */
  cases?: boolean;
  /** With `cases: false`: keep each scored case's paired figures (seven numbers a case) for `compare`. */
  paired?: boolean;
  /** With `cases: true`: keep only the first this many scored cases whole; the rest stream past, never held. */
  casesLimit?: number;
  /** `report --cluster`: suite runs are rebuilt from their results files, resampling these clusters. */
  cluster?: 'question' | 'subject';
}

function keepOf(opts: LoadOptions): KeepCases {
  return (opts.cases ?? true) ? 'scored' : opts.paired ? 'paired' : 'none';
}

/** Inputs that share a label are told apart by their target, else their path, else their place on the command line. */
function uniqueLabels<T extends { label: string; origin: string; report?: { target?: string | null } }>(runs: T[]): T[] {
  const base = runs.map((r) => r.label);
  const ways: ((r: T, i: number) => string)[] = [(r, i) => `${base[i]!} · ${r.report?.target ?? '?'}`, (r) => r.origin, (r, i) => `${r.origin} · input ${i + 1}`];
  for (const way of ways) {
    const count = new Map<string, number>();
    for (const r of runs) count.set(r.label, (count.get(r.label) ?? 0) + 1);
    runs.forEach((r, i) => {
      if (count.get(r.label)! > 1) r.label = way(r, i);
    });
  }
  return runs;
}

function loadInput(readers: InputReaders, { spec, kind, entry }: ResolvedSpec, opts: LoadOptions): ReportInput {
  if (opts.cluster !== undefined) {
    if (kind === 'code' || kind === 'infer') throw new JoulebenchError('E_INPUT', `${spec}: --cluster applies to suite runs, and this is a joulebench ${kind} ${kind === 'code' ? 'results file' : 'run file'}`);
    if (kind !== 'results') {
      // The intervals are computed from the cases: a report is clustered again from its results file.
      const resultsPath = entry === null ? spec.replace(/\.json$/i, '') + '.results.jsonl' : entry.results_path;
      if (!resultsPath || !existsSync(resultsPath)) {
        throw new JoulebenchError('E_INPUT', `${spec}: --cluster rebuilds the report from its results file, and ${resultsPath ? `${resultsPath} does not exist` : 'this run has none recorded'}`);
      }
      const run = loadResultsFile(resultsPath, opts);
      return { kind: 'suite', ...run, ...(entry === null ? { label: basename(spec).replace(/\.json$/i, ''), origin: spec } : fromHistory(entry)) };
    }
  }
  if (entry === null) {
    if (kind === 'code') {
      return { kind: 'code', label: basename(spec).replace(/\.datapoints\.jsonl$|\.jsonl$|\.json$/i, ''), origin: spec, results: readers.readCodeResults(spec), run_id: null };
    }
    if (kind === 'infer') {
      return { kind: 'infer', label: basename(spec).replace(/\.json$/i, ''), origin: spec, file: readers.readInferFile(spec), run_id: null };
    }
    return { kind: 'suite', ...(kind === 'results' ? loadResultsFile(spec, opts) : loadReportFile(readers, spec, opts)) };
  }
  if (kind === 'code') {
    const results = entry.report as unknown as CodeResults;
    // Aggregates are recomputed from the datapoints, as readCodeResults does for a file.
    results.solvers = readers.summarizeResults(results);
    return { kind: 'code', ...fromHistory(entry), results };
  }
  if (kind === 'infer') return { kind: 'infer', ...fromHistory(entry), file: entry.report as unknown as InferRunFile };
  const report = entry.report as unknown as BenchReport;
  return { kind: 'suite', ...fromHistory(entry), report, ...casesOf(entry.results_path, opts), receipt: entry.receipt };
}

const fromHistory = (e: HistoryEntry): InputOrigin => ({ label: `#${e.id}`, origin: `history #${e.id}`, run_id: e.id });

function historyEntry(spec: string, id: number | 'last', history: History): HistoryEntry {
  const runId = id === 'last' ? history.latestId() : id;
  const entry = runId === null ? null : history.get(runId);
  if (!entry) throw new JoulebenchError('E_INPUT', `${spec}: no such file, and no run ${spec} in ${history.path}`);
  return entry;
}

const HEAD_BYTES = 1 << 20;

/** What a file holds, by its first line (only the start of a JSONL is read) or its `format`; else a report. */
function fileKind(path: string): Exclude<ResolvedSpec['kind'], 'suite'> {
  let head: string;
  try {
    head = readHead(path, HEAD_BYTES);
  } catch {
    return /\.jsonl$/i.test(path) ? 'results' : 'report'; // their readers give the precise message
  }
  const firstLine = head.slice(0, head.indexOf('\n') >= 0 ? head.indexOf('\n') : head.length);
  try {
    const first = JSON.parse(firstLine) as { format?: unknown; record?: unknown } | null;
    if (first?.record === 'header' && first.format === DATAPOINTS_FORMAT) return 'code';
  } catch {
    // not one JSON line: a pretty-printed JSON document, read below
  }
  if (/\.jsonl$/i.test(path) || /^\{"record":"header"/.test(head)) return 'results';
  try {
    const kind = historyKind(String((JSON.parse(readTextFile(path, 'E_INPUT')) as { format?: unknown } | null)?.format));
    if (kind === 'code' || kind === 'infer') return kind;
  } catch {
    // readReportFile gives the precise message
  }
  return 'report';
}

/** A results JSONL: streamed, and aggregated in case order whatever order the lines were written in (src/report/rebuild.ts). */
function loadResultsFile(spec: string, opts: LoadOptions): LoadedRun {
  const { rebuilt, cases } = readResults(spec, opts);
  return {
    label: basename(spec).replace(/\.results\.jsonl$|\.jsonl$/i, ''),
    origin: spec,
    report: rebuilt.report,
    ...cases,
    receipt: readJsonIfExists(spec.replace(/\.results\.jsonl$/i, '.receipt.json'), spec),
    run_id: null,
    ...(rebuilt.ended && rebuilt.torn_bytes === 0 ? {} : { warnings: resultsFileWarnings(spec, rebuilt) }),
  };
}

type CaseFields = 'results' | 'paired' | 'header' | 'scored_total' | 'case_latency_ms' | 'results_path';

/** A results file rebuilt as `opts` asks, and the per-case data it keeps: every scored case, the first ones, or the paired figures. */
function readResults(path: string, opts: LoadOptions): { rebuilt: RebuiltRun; cases: Pick<LoadedRun, CaseFields> } {
  const first = keepOf(opts) === 'scored' && opts.casesLimit !== undefined ? new FirstCases(opts.casesLimit) : null;
  const cluster = opts.cluster !== undefined ? { cluster: opts.cluster } : {};
  // The paired figures stream into columns (a million cases a side in compare).
  const rebuilt = rebuildReport(path, first ? { keep: 'none', onScored: first.add, ...cluster } : { keep: keepOf(opts), ...cluster });
  const cases = {
    results: first ? first.cases : rebuilt.scored,
    results_path: path,
    ...(first ? first.summary() : {}),
    ...(rebuilt.paired ? { paired: rebuilt.paired } : {}),
    header: rebuilt.header,
  };
  return { rebuilt, cases };
}

/** What a results file that is not one whole run (unfinished, or cut off) must say beside its report. */
export function resultsFileWarnings(path: string, r: Pick<RebuiltRun, 'ended' | 'torn_bytes' | 'report'>): string[] {
  const out: string[] = [];
  if (!r.ended) {
    out.push(
      `${path}: the run did not finish (the file has no end line): this report covers the ${r.report.case_count} scored case(s) written; ` +
        '`joulebench run --resume` with the same settings finishes it',
    );
  }
  if (r.torn_bytes > 0) out.push(`${path}: its last ${r.torn_bytes} byte(s) have no newline (a line cut off when the run was stopped) and were left out`);
  return out;
}

function loadReportFile(readers: InputReaders, spec: string, opts: LoadOptions): LoadedRun {
  const report = readers.readReportFile(spec);
  const base = spec.replace(/\.json$/i, '');
  const receipt = readJsonIfExists(`${base}.receipt.json`, spec);
  return { label: basename(base), origin: spec, report, ...casesOf(`${base}.results.jsonl`, opts), receipt, run_id: null };
}

/** The per-case data `opts` asks for, and the file's header, from a results file beside a report (or a history run's), when there is one. */
function casesOf(path: string | null, opts: LoadOptions): Pick<LoadedRun, CaseFields> {
  if (path === null || !existsSync(path)) return { results: null, header: null };
  return keepOf(opts) === 'none' ? { results: null, header: null, results_path: path } : readResults(path, opts).cases;
}

/** The first `bytes` of a file as text (a leading BOM skipped), under readTextFile's guards. */
function readHead(path: string, bytes: number): string {
  const { fd } = openRegularFile(path, 'E_INPUT');
  try {
    const buf = Buffer.allocUnsafe(bytes);
    let n = 0;
    while (n < bytes) {
      const got = readSync(fd, buf, n, bytes - n, null);
      if (got === 0) break;
      n += got;
    }
    return buf.toString('utf8', utf8BomLength(buf.subarray(0, n)), n);
  } finally {
    closeSync(fd);
  }
}

/** A receipt (or other JSON) beside an input, or null when it is absent or unreadable. */
export function readJsonIfExists(path: string, forSpec: string): Record<string, unknown> | null {
  if (path === forSpec || !existsSync(path)) return null;
  try {
    return JSON.parse(readTextFile(path, 'E_INPUT')) as Record<string, unknown>;
  } catch {
    return null;
  }
}
