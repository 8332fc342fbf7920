import { closeSync, readSync } from 'node:fs';
import { aggregatorOf, type Aggregator, reportContextOf, type BenchReport } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import type { PowerTraceSummary } from '../core/energy.js';
import { BUILTIN_PROMPTS_LABEL, mtBenchBlock } from '../judge/summary.js';
import type { PromptSetLabel } from '../judge/prompt-set.js';
import type { JudgeTally } from '../judge/score.js';
import { LoadBlockRebuild } from '../load/rebuild.js';
import { openRegularFile } from '../read-text.js';
import { phaseRank } from '../runner/case-key.js';
import { ResultsLineParser, streamResultLines } from '../runner/results-stream.js';
import { MAX_PAIRED_PASS, PairedColumns } from '../stats/paired-columns.js';
import { checkReportHeader } from './header-check.js';
import { reportContextFromMeasures } from '../runner/run-measures.js';
import { tracedBy } from '../runner/power-trace-line.js';

/** Per-case data kept beside the report: `none` (flat memory), `scored` (every scored case), `paired` (compare's seven figures). */
export type KeepCases = 'none' | 'scored' | 'paired';

interface RebuildOptions {
  keep?: KeepCases;
  /** Read buffer, bytes (tests use small ones to cross chunk edges). */
  chunkBytes?: number;
  /** Each scored case as it is read, in file order. */
  onScored?: (r: CaseResult) => void;
  /** `report --cluster`: the intervals resample these clusters, whatever the run was made with (the report says which). */
  cluster?: 'question' | 'subject';
}

export interface RebuiltRun {
  header: ResultsHeader;
  report: BenchReport;
  /** `keep: 'scored'`: the scored cases in file order. */
  scored: CaseResult[] | null;
  /** `keep: 'paired'`: the scored cases' paired figures in file order, as columns. */
  paired: PairedColumns | null;
  /** True when the case lines were already in case order (a sequential run), read once. */
  in_order: boolean;
  /** The file has an `end` line: the run finished (an interrupted run's file has none until `--resume` finishes it). */
  ended: boolean;
  /** Bytes after the last newline, left out: a line cut off when the run was killed mid-write. */
  torn_bytes: number;
}

/**
 * The report of a results file, rebuilt as it streams past, byte-identical to the run's own. Floating-point
 * sums depend on order: from the first case line out of order on, keys and offsets are kept and read back in case order.
 */
export function rebuildReport(path: string, opts: RebuildOptions = {}): RebuiltRun {
  const keep = opts.keep ?? 'none';
  const onScored = opts.onScored;
  const keys = new CaseKeys();
  let header: ResultsHeader | null = null;
  let agg: Aggregator | null = null;
  let inOrder = true;
  /** Where the first line out of order starts (the lines before it are in case order). */
  let prefixEnd = -1;
  let last: CaseKey = [-1, 0, 0];
  let judgeLine: Record<string, unknown> | null = null;
  let loadEnergy: Record<string, unknown> | null = null;
  let runMeasures: Record<string, unknown> | null = null;
  let ended = false;
  let traced: PowerTraceSummary | null = null;
  const scored: CaseResult[] = [];
  const paired = keep === 'paired' ? new PairedColumns() : null;
  let load: LoadBlockRebuild | null = null;
  const judged: CaseResult[] = [];
  let lineOffset = 0;

  const parser = new ResultsLineParser(path, {
    header: (read) => {
      checkReportHeader(read, path);
      const h = opts.cluster !== undefined ? { ...read, cluster: opts.cluster } : read;
      header = h;
      load = LoadBlockRebuild.forHeader(h, path);
      agg = aggregatorOf(h);
    },
    case: (r) => {
      const key: CaseKey = [phaseRank(r.phase), r.pass, r.index];
      const before = sortsBefore(key, last);
      if (before) inOrder = false;
      else last = key;
      if (prefixEnd < 0 && before) {
        agg = null;
        prefixEnd = lineOffset;
      }
      if (prefixEnd < 0) agg!.add(r);
      else keys.push(key[0], r.pass, r.index, lineOffset);
      if (r.phase !== 'scored') return;
      onScored?.(r);
      if (keep === 'scored') scored.push(r);
      else if (paired !== null) pushPaired(paired, r, path);
      if (load !== null) (load as LoadBlockRebuild).add(r);
      const m = r.meta as { judge?: unknown } | undefined;
      if (typeof m?.judge === 'object' && m.judge !== null) judged.push({ phase: r.phase, dataset: r.dataset, score: r.score, meta: { judge: m.judge } } as unknown as CaseResult);
    },
    other: (o) => {
      traced = tracedBy(o, traced, path);
      if (o.record === 'judge') judgeLine ??= o;
      else if (o.record === 'load_energy') loadEnergy ??= o;
      // The last one: a resumed run's final process wrote the report the file ends with.
      else if (o.record === 'run_measures') runMeasures = o;
      else if (o.record === 'end') ended = true;
    },
  });
  const end = streamResultLines(
    path,
    {
      region: (buf, start, end, firstLine, offset) => {
        let n = firstLine;
        for (let s = start; s <= end; n++) {
          let nl = buf.indexOf(0x0a, s);
          if (nl < 0 || nl > end) nl = end;
          lineOffset = offset + (s - start);
          parser.line(buf.toString('utf8', s, nl), n);
          s = nl + 1;
        }
      },
    },
    opts.chunkBytes,
  );
  const h = header as ResultsHeader | null;
  if (!h) throw new JoulebenchError('E_RESULTS', `${path}: results file has no header line`);
  // Beyond the cases: a load run's load_energy line (window, idle), else a finished run's run_measures line.
  const beyondCases =
    load !== null ? (load as LoadBlockRebuild).reportContext(loadEnergy) : runMeasures !== null ? reportContextFromMeasures(runMeasures, path) : {};
  const ctx = { ...reportContextOf(h), ...beyondCases };
  const ordered = prefixEnd >= 0 ? inCaseOrder(path, h, prefixEnd, keys) : ((agg as Aggregator | null) ?? aggregatorOf(h));
  const aggregated = ordered.report(ctx);
  // Where the run puts it: after the aggregate, before the judge's and the load blocks.
  const report = traced ? { ...aggregated, power_trace: traced } : aggregated;
  const loadBlock = (load as LoadBlockRebuild | null)?.block(loadEnergy) ?? null;
  const judgedReport = judgeLine ? withJudgeBlock(report, judged, judgeLine, path) : report;
  return {
    header: h,
    report: loadBlock ? ({ ...judgedReport, load: loadBlock } as BenchReport) : judgedReport,
    scored: keep === 'scored' ? scored : null,
    paired,
    in_order: inOrder,
    ended,
    torn_bytes: end.torn_bytes,
  };
}

/** Adds the MT-Bench block of a judged results file (its judge line, its judged cases in file order). */
export function withJudgeBlock(report: BenchReport, scored: readonly CaseResult[], line: Record<string, unknown>, path: string): BenchReport {
  const t = line.tally as Partial<JudgeTally> | null | undefined;
  const numOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));
  const ok =
    typeof t === 'object' && t !== null &&
    (['judgements', 'cached', 'requests', 'errors'] as const).every((k) => Number.isInteger(t[k])) &&
    (['joules', 'usd', 'prompt_tokens', 'completion_tokens'] as const).every((k) => numOrNull(t[k])) &&
    Array.isArray(t.energy_sources) && typeof line.model === 'string' && typeof line.prompt_hash === 'string' && typeof line.pass === 'number';
  if (!ok) throw new JoulebenchError('E_RESULTS', `${path}: the judge line is malformed (model, prompt_hash, pass and tally are required)`);
  // A judge line without a prompts label was judged by joulebench's own prompts.
  const prompts = typeof line.prompts === 'object' && line.prompts !== null ? (line.prompts as PromptSetLabel) : BUILTIN_PROMPTS_LABEL;
  const info = { model: String(line.model), mode: String(line.mode), prompt_hash: String(line.prompt_hash), prompts, pass: Number(line.pass) };
  return { ...report, ...mtBenchBlock(scored, report, line.tally as JudgeTally, info) };
}

/** The aggregate of an out-of-order file: the in-order lines before `prefixEnd` merged with the kept lines, by key. */
function inCaseOrder(path: string, h: ResultsHeader, prefixEnd: number, keys: CaseKeys): Aggregator {
  const agg = aggregatorOf(h);
  const order = keys.sortedOrder();
  const prefix = new LineReader(path);
  const rest = new LineReader(path);
  const changed = (offset: number): never => {
    throw new JoulebenchError('E_RESULTS', `${path}: changed while being read (the line at byte ${offset} is not the one read before)`);
  };
  let k = 0;
  /** Adds the kept lines whose keys sort before `key`; all of them when its rank is Infinity. */
  const restBefore = (key: CaseKey): void => {
    for (; k < order.length; k++) {
      const i = order[k]!;
      const [kr, kp, ki] = [keys.rank(i), keys.pass(i), keys.index(i)];
      if (!sortsBefore([kr, kp, ki], key)) return;
      const { buf, start, end } = rest.lineAt(keys.offset(i));
      const r = caseIn(buf, start, end);
      if (r === null || phaseRank(r.phase) !== kr || r.pass !== kp || r.index !== ki) changed(keys.offset(i));
      agg.add(r!);
    }
  };
  try {
    for (let offset = 0; offset < prefixEnd; ) {
      const { buf, start, end } = prefix.lineAt(offset);
      const next = offset + (end - start) + 1;
      if (offset === 0 && end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) {
        offset = 3; // a BOM before the header
        continue;
      }
      const r = caseIn(buf, start, end);
      if (r !== null) {
        restBefore([phaseRank(r.phase), r.pass, r.index]);
        agg.add(r);
      }
      offset = next;
    }
    restBefore([Infinity, 0, 0]);
  } finally {
    prefix.close();
    rest.close();
  }
  return agg;
}

/** A case line's place in case order: phase rank, pass, index. */
type CaseKey = readonly [rank: number, pass: number, index: number];

const sortsBefore = ([r1, p1, i1]: CaseKey, [r2, p2, i2]: CaseKey): boolean => r1 < r2 || (r1 === r2 && (p1 < p2 || (p1 === p2 && i1 < i2)));

/** A line's case result (null for any other line), read again after the first pass validated it. */
function caseIn(buf: Buffer, start: number, end: number): CaseResult | null {
  let o: unknown;
  try {
    o = JSON.parse(buf.toString('utf8', start, end));
  } catch {
    return null; // a blank line (validated in the first pass)
  }
  return (o as { record?: unknown } | null)?.record === 'case' ? (o as CaseResult) : null;
}

const PAGE = 1 << 16;

/** Case lines' keys (phase rank, pass, index) and byte offsets in file order: pages of typed arrays, 25 bytes a line. */
class CaseKeys {
  private readonly pages: { rank: Uint8Array; pass: Float64Array; index: Float64Array; offset: Float64Array }[] = [];
  length = 0;
  push(rank: number, pass: number, index: number, offset: number): void {
    const at = this.length & (PAGE - 1);
    if (at === 0) {
      const f64 = () => new Float64Array(PAGE);
      this.pages.push({ rank: new Uint8Array(PAGE), pass: f64(), index: f64(), offset: f64() });
    }
    const page = this.pages[this.length >>> 16]!;
    page.rank[at] = rank;
    page.pass[at] = pass;
    page.index[at] = index;
    page.offset[at] = offset;
    this.length++;
  }
  readonly rank = (i: number): number => this.pages[i >>> 16]!.rank[i & (PAGE - 1)]!;
  readonly pass = (i: number): number => this.pages[i >>> 16]!.pass[i & (PAGE - 1)]!;
  readonly index = (i: number): number => this.pages[i >>> 16]!.index[i & (PAGE - 1)]!;
  readonly offset = (i: number): number => this.pages[i >>> 16]!.offset[i & (PAGE - 1)]!;
  /** Line numbers (0-based among case lines) in case order (the parser refused a repeated key). */
  sortedOrder(): Uint32Array {
    const order = new Uint32Array(this.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    return order.sort((a, b) => this.rank(a) - this.rank(b) || this.pass(a) - this.pass(b) || this.index(a) - this.index(b) || a - b);
  }
}

/** Reads lines by file offset through one block, so nearby lines cost no extra read. */
class LineReader {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(1 << 18);
  private base = -1; // file offset of buf[0]
  private len = 0;
  constructor(private readonly path: string) {
    this.fd = openRegularFile(path, 'E_RESULTS').fd;
  }
  /** The line starting at `offset`, without its newline. */
  lineAt(offset: number): { buf: Buffer; start: number; end: number } {
    // Else a block around the line is read (a concurrent run's lines step back as often as forward), grown for a long line.
    for (let read = false; ; read = true) {
      const start = offset - this.base;
      const nl = this.base >= 0 && start >= 0 && start < this.len ? this.buf.indexOf(0x0a, start) : -1;
      if (nl >= 0 && nl < this.len) return { buf: this.buf, start, end: nl };
      if (read && this.len < this.buf.length) throw new JoulebenchError('E_RESULTS', `${this.path}: changed while being read (no complete line at byte ${offset})`);
      if (read) this.buf = Buffer.allocUnsafe(this.buf.length * 2);
      this.base = Math.max(0, offset - (this.buf.length >> 2));
      for (this.len = 0; this.len < this.buf.length; ) {
        const got = readSync(this.fd, this.buf, this.len, this.buf.length - this.len, this.base + this.len);
        if (got === 0) break;
        this.len += got;
      }
    }
  }
  close(): void {
    closeSync(this.fd);
  }
}

/** A scored case's paired figures (as pairedCaseOf reads them) added to `cols`. */
function pushPaired(cols: PairedColumns, r: CaseResult, path: string): void {
  if (!(r.pass >= 0 && r.pass < MAX_PAIRED_PASS && r.index >= 0 && r.index < 2 ** 32)) {
    throw new JoulebenchError('E_RESULTS', `${path}: case line with pass ${r.pass} and index ${r.index}: a pass must be 0 to ${MAX_PAIRED_PASS - 1}, an index 0 to 2^32 − 1`);
  }
  cols.pushCase(r.pass, r.index, r.passed, r.weight, r.joules, r.cost_usd, r.error === null ? Math.floor(r.latency_ms) : null);
}
