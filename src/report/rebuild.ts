import { closeSync, readSync } from 'node:fs';
import { aggregatorOf, type Aggregator, reportContextOf, type BenchReport } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import { mtBenchBlock } from '../judge/summary.js';
import type { JudgeTally } from '../judge/score.js';
import { LoadBlockRebuild } from '../load/rebuild.js';
import { openRegularFile } from '../read-text.js';
import { caseLimits, NO_LIMITS, outsideRunReason, phaseRank, withinRun, type CaseLimits } from '../runner/case-key.js';
import { ResultsLineParser } from '../runner/results-file.js';
import { streamResultLines } from '../runner/results-stream.js';
import { MAX_PAIRED_PASS, PairedColumns } from '../stats/paired-columns.js';
import { checkReportHeader } from './header-check.js';
import { CaseLineScanner } from './case-scan.js';
import { ReorderWindow } from './reorder.js';
import { ScanAhead, type ScanAheadStats } from './scan-ahead.js';
import { SeenKeys } from './seen-keys.js';
import { reportContextFromMeasures } from '../runner/run-measures.js';

/**
 * Per-case data kept beside the report: `none` (the report only: memory stays flat whatever the
 * number of cases), `scored` (every scored case as parsed, for `report --html` and `--cases`), `paired`
 * (the seven figures a paired comparison reads, for `compare`).
 */
export type KeepCases = 'none' | 'scored' | 'paired';

export interface RebuildOptions {
  keep?: KeepCases;
  /** Read buffer, bytes (tests use small ones to cross chunk edges). */
  chunkBytes?: number;
  /** How many case lines a concurrent run's file is put back in order through (tests use small ones). */
  window?: number;
  /** Files of at least this many bytes are scanned ahead on a worker thread (src/report/scan-ahead.ts; tests use 0); Infinity: never. */
  scanAheadMinBytes?: number;
  /** The worker's ring, in lines (tests use tiny ones, to wrap around often). */
  scanAheadSlots?: number;
  /** Wait for the worker's record of each line rather than read a line whose record is not there yet (tests). */
  scanAheadWait?: boolean;
  /** Told how the scan-ahead went, when there was one (tests). */
  onScanAhead?: (stats: ScanAheadStats) => void;
  /**
   * Each scored case as it is read, in file order. `r` may be the scanner's reused object, holding what
   * aggregation reads and valid only during the call; `whole()` parses the line into an object of its own.
   */
  onScored?: (r: CaseResult, whole: () => CaseResult) => void;
}

/**
 * The reorder window for a concurrent run's file (header `concurrency` > 1): a line may be written up
 * to this many places after its place in case order and still be aggregated in the one pass — 16 places
 * a concurrent case, from 256 to 4,096 (about 250 bytes a held case). A case goes out as soon as it is
 * next in order, so the window fills only where the order cannot tell (a file's first cases, a pass's
 * start); when it was always full, a 4,096-case window cost ~1.5 s more CPU than a 256-case one at 1M
 * router lines 32 places late (the held copies fall out of the CPU caches before they are added).
 */
export function reorderWindow(concurrency: number): number {
  return Math.min(4096, Math.max(256, 16 * concurrency));
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
  /** Case lines whose (phase, pass, index) an earlier line had: counted in the report, as written (see SeenKeys). */
  repeated_keys: number;
}

/**
 * The report of a results file, rebuilt as it streams past: byte-identical to the run's own report,
 * whatever order its case lines were written in, without holding the file or its line objects.
 *
 * Aggregation must see the cases in case order (phase, pass, index; file order for a repeated key):
 * floating-point sums depend on order, and a concurrent run writes lines as cases finish. Lines in case
 * order (a sequential run) are aggregated as they are read. At the first line out of order that
 * aggregate is dropped; from there on each case line's key and byte offset are kept (25 bytes a case),
 * and once the file is read its case lines are aggregated again in case order, read back by offset.
 *
 * Case lines the encoder wrote are read by {@link CaseLineScanner} without JSON.parse; any other line
 * goes through ResultsLineParser, so the rules and messages are readResultsFile's. The judge block is
 * rebuilt from the judged cases' score and category, kept in file order; a load run's `load` block from
 * each request's `meta.load`, gathered into typed columns as it is read (src/load/columns.ts).
 */
export function rebuildReport(path: string, opts: RebuildOptions = {}): RebuiltRun {
  const keep = opts.keep ?? 'none';
  const scanner = new CaseLineScanner();
  const keys = new CaseKeys();
  let header: ResultsHeader | null = null;
  let agg: Aggregator | null = null;
  /** A concurrent run's file: its case lines go through the window, into `agg` in case order. */
  let reorder: ReorderWindow | null = null;
  /** The window could not restore the order: the case lines are ordered by their keys, read in another pass. */
  let rescan = false;
  /** False once a case line came before the one above it. */
  let inOrder = true;
  /** Without a window, once a line is out of order: where it starts (the lines before it are in case order). */
  let prefixEnd = -1;
  let lastRank = -1;
  let lastPass = 0;
  let lastIndex = 0;
  let judgeLine: Record<string, unknown> | null = null;
  let loadEnergy: Record<string, unknown> | null = null;
  let runMeasures: Record<string, unknown> | null = null;
  let ended = false;
  const seen = new SeenKeys();
  const scored: CaseResult[] = [];
  const paired = keep === 'paired' ? new PairedColumns() : null;
  /** A load run's file: its requests' `meta.load`, gathered into columns as they are read. */
  let load: LoadBlockRebuild | null = null;
  const judged: CaseResult[] = [];
  let lineOffset = 0;
  let lineNo = 0;
  let caseLines = 0;
  /** The passes and cases the header says the run had (see caseLimits). */
  let limits: CaseLimits = NO_LIMITS;

  const onCase = (r: CaseResult, fresh: boolean): void => {
    const rank = phaseRank(r.phase);
    caseLines++;
    // A case the run could not have had (the parser checks its lines too; the scanner's are checked here).
    if (!withinRun(r, limits)) throw new JoulebenchError('E_RESULTS', outsideRunReason(path, lineNo, r, limits));
    seen.add(rank, r.pass, r.index);
    const before = rank < lastRank || (rank === lastRank && (r.pass < lastPass || (r.pass === lastPass && r.index < lastIndex)));
    if (before) inOrder = false;
    else {
      lastRank = rank;
      lastPass = r.pass;
      lastIndex = r.index;
    }
    if (reorder !== null) {
      // `fresh`: a parsed object of its own; else the scanner's reused one, copied while held.
      if (!reorder.push(r, rank, !fresh)) {
        reorder = null;
        agg = null;
        rescan = true;
      }
    } else if (prefixEnd < 0 && !rescan) {
      if (before) {
        agg = null;
        prefixEnd = lineOffset;
        keys.push(rank, r.pass, r.index, lineOffset);
      } else agg!.add(r);
    } else if (!rescan) keys.push(rank, r.pass, r.index, lineOffset);
    if (r.phase !== 'scored') return;
    if (onScored) onScored(r, fresh ? () => r : wholeLine);
    if (keep === 'scored') scored.push(r);
    else if (paired !== null) pushPaired(paired, r, path);
    // A load run's every scored line is a request (one without meta.load, which the scanner may read, is refused there).
    if (load !== null) (load as LoadBlockRebuild).add(r);
    if (fresh && r.meta !== undefined) {
      // Only parsed lines carry meta (the scanner declines it): what the judge block reads, nothing more.
      const m = r.meta as { judge?: unknown };
      if (typeof m.judge === 'object' && m.judge !== null) judged.push({ phase: r.phase, dataset: r.dataset, score: r.score, meta: { judge: m.judge } } as unknown as CaseResult);
    }
  };
  const parser = new ResultsLineParser(path, {
    header: (h) => {
      checkReportHeader(h, path);
      header = h;
      limits = caseLimits(h);
      load = LoadBlockRebuild.forHeader(h, path);
      const a = aggregatorOf(h);
      agg = a;
      if ((h.concurrency ?? 1) > 1) reorder = new ReorderWindow(opts.window ?? reorderWindow(h.concurrency ?? 1), (r) => a.add(r));
    },
    case: (r) => onCase(r, true),
    other: (o) => {
      if (o.record === 'judge') judgeLine ??= o;
      else if (o.record === 'load_energy') loadEnergy ??= o;
      // The last one: a resumed run's final process wrote the report the file ends with.
      else if (o.record === 'run_measures') runMeasures = o;
      else if (o.record === 'end') ended = true;
    },
  });
  // Every scored case is kept whole for --html: parse every line then (that path is not the fast one).
  const scan = keep !== 'scored';
  const onScored = opts.onScored;
  // The line being read, for onScored's `whole()` (set only when there is an onScored to call).
  let lineBuf: Buffer | null = null;
  let lineStart = 0;
  let lineEnd = 0;
  const wholeLine = (): CaseResult => JSON.parse(lineBuf!.toString('utf8', lineStart, lineEnd)) as CaseResult;
  // A large file's lines are scanned ahead on another core; the records come back in file order.
  const ahead = scan && opts.scanAheadMinBytes !== Infinity ? ScanAhead.start(path, { minBytes: opts.scanAheadMinBytes, slots: opts.scanAheadSlots, wait: opts.scanAheadWait }) : null;
  let end: ReturnType<typeof streamResultLines>;
  try {
    end = streamResultLines(
      path,
      {
        region: (buf, start, end, firstLine, offset) => {
          let n = firstLine;
          for (let s = start; s <= end; n++) {
            lineOffset = offset + (s - start);
            lineNo = n;
            // A line the scanner reads says where it ends; any other is found and parsed.
            // Into the reorder window's spare object when there is a window (held there without a copy).
            const into = reorder !== null ? reorder.spare() : scanner.r;
            // The worker's reading of the line: where it ends (≥ 0), -2 not a line it reads, -1 none (scan it here).
            const ahead_ = ahead !== null ? ahead.next(buf, s, end, lineOffset, into) : -1;
            let nl = -1;
            if (scan && header !== null) nl = ahead_ >= 0 ? ahead_ : ahead_ === -2 ? -1 : scanner.scanLine(buf, s, end, into);
            const read = nl >= 0;
            if (!read) {
              nl = buf.indexOf(0x0a, s);
              if (nl < 0 || nl > end) nl = end;
            }
            if (onScored) {
              lineBuf = buf;
              lineStart = s;
              lineEnd = nl;
            }
            if (read) onCase(into, false);
            else parser.line(buf.toString('utf8', s, nl), n);
            s = nl + 1;
          }
        },
      },
      opts.chunkBytes,
    );
  } finally {
    if (ahead !== null) opts.onScanAhead?.(ahead.close());
  }
  const h = header as ResultsHeader | null;
  if (!h) throw new JoulebenchError('E_RESULTS', `${path}: results file has no header line`);
  // What the run's report took from beyond the cases: a load run's load_energy line holds its whole-run
  // window and idle calibration; any other finished run wrote a run_measures line (idle, suite window, wall time).
  const beyondCases =
    load !== null ? (load as LoadBlockRebuild).reportContext(loadEnergy) : runMeasures !== null ? reportContextFromMeasures(runMeasures, path) : {};
  const ctx = { ...reportContextOf(h), ...beyondCases };
  if (reorder !== null && !(reorder as ReorderWindow).drain()) rescan = true;
  let ordered: Aggregator;
  if (rescan) ordered = inCaseOrder(path, h, 0, keysOf(path, caseLines, end.good_bytes));
  else if (prefixEnd >= 0) ordered = inCaseOrder(path, h, prefixEnd, keys);
  else ordered = (agg as Aggregator | null) ?? aggregatorOf(h);
  const report = ordered.report(ctx);
  // A load run (--request-rate) carries its serving block, rebuilt from the same file.
  const loadBlock = (load as LoadBlockRebuild | null)?.block(loadEnergy) ?? null;
  // A judged results file (run with a judge, or rescored) carries its judge line: its MT-Bench block is rebuilt.
  const judgedReport = judgeLine ? withJudgeBlock(report, judged, judgeLine, path) : report;
  return {
    header: h,
    report: loadBlock ? ({ ...judgedReport, load: loadBlock } as BenchReport) : judgedReport,
    scored: keep === 'scored' ? scored : null,
    paired,
    in_order: inOrder,
    ended,
    torn_bytes: end.torn_bytes,
    repeated_keys: seen.repeats,
  };
}

/**
 * Every case line's key and offset, read again from the start (a concurrent file more out of order
 * than the window holds). The file was validated by the first pass; a different number of case lines
 * or bytes now is a file that changed while being read.
 */
function keysOf(path: string, caseLines: number, goodBytes: number): CaseKeys {
  const keys = new CaseKeys();
  const scanner = new CaseLineScanner();
  const end = streamResultLines(path, {
    region: (buf, start, end, _firstLine, offset) => {
      for (let s = start; s <= end; ) {
        let nl = buf.indexOf(0x0a, s);
        if (nl < 0 || nl > end) nl = end;
        const r = caseIn(buf, s, nl, scanner);
        if (r !== null) keys.push(phaseRank(r.phase), r.pass, r.index, offset + (s - start));
        s = nl + 1;
      }
    },
  });
  if (keys.length !== caseLines || end.good_bytes !== goodBytes) throw new JoulebenchError('E_RESULTS', `${path}: changed while being read (${keys.length} case lines and ${end.good_bytes} bytes, not ${caseLines} and ${goodBytes})`);
  return keys;
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
  const info = { model: String(line.model), mode: String(line.mode), prompt_hash: String(line.prompt_hash), pass: Number(line.pass) };
  return { ...report, ...mtBenchBlock(scored, report, line.tally as JudgeTally, info) };
}

/**
 * The aggregate of a file whose case lines are out of order. The case lines before the first one out
 * of order (`prefixEnd`) are in case order already; the keys and offsets of the rest were kept. Those
 * are sorted (stably: file order for a repeated key) and merged with the in-order lines as those are
 * read again from the start, every line read back from its offset. A concurrent run's lines are nearly
 * in order, so reads mostly hit the current block.
 */
function inCaseOrder(path: string, h: ResultsHeader, prefixEnd: number, keys: CaseKeys): Aggregator {
  const agg = aggregatorOf(h);
  const order = keys.sortedOrder();
  const prefix = new LineReader(path);
  const rest = new LineReader(path);
  const prefixScanner = new CaseLineScanner();
  const restScanner = new CaseLineScanner();
  const changed = (offset: number): never => {
    throw new JoulebenchError('E_RESULTS', `${path}: changed while being read (the line at byte ${offset} is not the one read before)`);
  };
  let k = 0;
  /** Adds the kept lines whose keys sort before (rank, pass, index); all of them when rank is Infinity. */
  const restBefore = (rank: number, pass: number, index: number): void => {
    for (; k < order.length; k++) {
      const i = order[k]!;
      const kr = keys.rank(i);
      const kp = keys.pass(i);
      const ki = keys.index(i);
      if (!(kr < rank || (kr === rank && (kp < pass || (kp === pass && ki < index))))) return;
      const r = caseAt(rest, keys.offset(i), restScanner);
      if (r === null || phaseRank(r.phase) !== kr || r.pass !== kp || r.index !== ki) changed(keys.offset(i));
      agg.add(r!);
    }
  };
  try {
    // The in-order lines, read again in file order (the header and other records are passed over).
    for (let offset = 0; offset < prefixEnd; ) {
      const { buf, start, end } = prefix.lineAt(offset);
      const next = offset + (end - start) + 1;
      if (offset === 0 && end - start >= 3 && buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf) {
        offset = 3; // a BOM before the header
        continue;
      }
      const r = caseIn(buf, start, end, prefixScanner);
      if (r !== null) {
        restBefore(phaseRank(r.phase), r.pass, r.index);
        agg.add(r);
      }
      offset = next;
    }
    restBefore(Infinity, 0, 0);
  } finally {
    prefix.close();
    rest.close();
  }
  return agg;
}

/** The case line at `offset`, or null when the line there is not a case line. */
function caseAt(reader: LineReader, offset: number, scanner: CaseLineScanner): CaseResult | null {
  const { buf, start, end } = reader.lineAt(offset);
  return caseIn(buf, start, end, scanner);
}

/** A line's case result (null for any other line): the scanner's reading, else JSON.parse's. */
function caseIn(buf: Buffer, start: number, end: number, scanner: CaseLineScanner): CaseResult | null {
  if (scanner.scan(buf, start, end)) return scanner.r;
  let o: unknown;
  try {
    o = JSON.parse(buf.toString('utf8', start, end));
  } catch {
    return null; // a blank line (validated in the first pass)
  }
  return (o as { record?: unknown } | null)?.record === 'case' ? (o as CaseResult) : null;
}

/** Fixed-size pages of typed arrays: grows without copying, 25 bytes a case line (kept after the first line out of order). */
const PAGE = 1 << 16;

/** Every case line's key (phase rank, pass, index) and byte offset, in file order. */
class CaseKeys {
  private readonly ranks: Uint8Array[] = [];
  private readonly passes: Float64Array[] = [];
  private readonly indexes: Float64Array[] = [];
  private readonly offsets: Float64Array[] = [];
  length = 0;
  push(rank: number, pass: number, index: number, offset: number): void {
    const at = this.length & (PAGE - 1);
    if (at === 0) {
      this.ranks.push(new Uint8Array(PAGE));
      this.passes.push(new Float64Array(PAGE));
      this.indexes.push(new Float64Array(PAGE));
      this.offsets.push(new Float64Array(PAGE));
    }
    const page = this.length >>> 16;
    this.ranks[page]![at] = rank;
    this.passes[page]![at] = pass;
    this.indexes[page]![at] = index;
    this.offsets[page]![at] = offset;
    this.length++;
  }
  rank(i: number): number {
    return this.ranks[i >>> 16]![i & (PAGE - 1)]!;
  }
  pass(i: number): number {
    return this.passes[i >>> 16]![i & (PAGE - 1)]!;
  }
  index(i: number): number {
    return this.indexes[i >>> 16]![i & (PAGE - 1)]!;
  }
  offset(i: number): number {
    return this.offsets[i >>> 16]![i & (PAGE - 1)]!;
  }
  /** Line numbers (0-based among case lines) in case order; a repeated key keeps file order. */
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
    if (this.base >= 0 && offset >= this.base && offset < this.base + this.len) {
      const start = offset - this.base;
      const nl = this.buf.indexOf(0x0a, start);
      if (nl >= 0 && nl < this.len) return { buf: this.buf, start, end: nl };
    }
    // Read a block around the line (a quarter of it before: a concurrent run's lines step back a
    // little as often as forward); grow it for a line longer than the rest of the block.
    for (;;) {
      const base = Math.max(0, offset - (this.buf.length >> 2));
      this.len = 0;
      this.base = base;
      while (this.len < this.buf.length) {
        const got = readSync(this.fd, this.buf, this.len, this.buf.length - this.len, base + this.len);
        if (got === 0) break;
        this.len += got;
      }
      const start = offset - base;
      const nl = start < this.len ? this.buf.indexOf(0x0a, start) : -1;
      if (nl >= 0 && nl < this.len) return { buf: this.buf, start, end: nl };
      if (this.len < this.buf.length) throw new JoulebenchError('E_RESULTS', `${this.path}: changed while being read (no complete line at byte ${offset})`);
      this.buf = Buffer.allocUnsafe(this.buf.length * 2);
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
