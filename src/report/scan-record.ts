import type { CaseResult } from '../core/types.js';
import type { CaseLineScanner } from './case-scan.js';
import { TraceCache, type TraceEntry } from './scan-bytes.js';

/**
 * One line's record in the scan-ahead ring (src/report/scan-ahead.ts): doubles, `REC` a line. Numbers
 * that may be null are NaN for null (no JSON number is NaN); strings are ids in the worker's tables
 * with their bytes' place in the line (so the main thread decodes each new one from its own copy of
 * the bytes); a trace is the serial the worker's trace cache gave it and its place.
 */
export const REC = 32;
const START = 0; // file offset of the line
const END = 1; // file offset of its newline
const OK = 2; // 1: the worker read it; 0: it did not (the main thread parses it)
const PHASE = 3;
const PASS = 4;
const INDEX = 5;
const DATASET = 6; // id, then at (from the line's start), length
const STAGE = 9; // id (-2: null), at, length
const PASSED = 12;
const SCORE = 13;
const WEIGHT = 14;
const JOULES = 15;
const SOURCE = 16; // id (-2: null), at, length
const BELOW_FLOOR = 19;
const LATENCY = 20;
const TTFT = 21;
const TPOT = 22;
const PROMPT = 23;
const COMPLETION = 24;
const COST = 25;
const ATTEMPTS = 26;
const RETRY = 27;
const TRACE = 28; // serial (-1: none), at
const RANGE_LOW = 30; // joules_range.low (NaN: no joules_range), then .high

/** The control words (Int32Array over a SharedArrayBuffer). */
export const C_WRITTEN = 0;
export const C_CONSUMED = 1;
/** 1: the worker read the whole file; 2: it stopped early (an error, or asked to). */
export const C_DONE = 2;
export const C_ABORT = 3;
export const C_READY = 4;
export const CONTROL_WORDS = 8;

export interface ScanAheadData {
  fd: number;
  ring: SharedArrayBuffer;
  control: SharedArrayBuffer;
  slots: number;
}

const n = (v: number | null): number => (v === null ? NaN : v);
const b3 = (v: boolean | null): number => (v === true ? 1 : v === false ? 0 : -1);

/** A string field's three slots: the scanner's id for its value, where it starts in the line (from `s`), its length. */
function putRef(rec: Float64Array, at: number, ref: { id: number; at: number; len: number }, s: number): void {
  rec[at] = ref.id;
  rec[at + 1] = ref.at - s;
  rec[at + 2] = ref.len;
}

/** Writes line `[start, end)` (file offsets; `s`: its start in the worker's buffer) read into `r` (null: not read) at `o`. */
export function encodeRecord(rec: Float64Array, o: number, r: CaseResult | null, start: number, end: number, s: number, scanner: CaseLineScanner): void {
  rec[o + START] = start;
  rec[o + END] = end;
  if (r === null) {
    rec[o + OK] = 0;
    return;
  }
  const st = scanner.state;
  rec[o + OK] = 1;
  rec[o + PHASE] = r.phase === 'scored' ? 1 : 0;
  rec[o + PASS] = r.pass;
  rec[o + INDEX] = r.index;
  putRef(rec, o + DATASET, st.datasets, s);
  if (r.stage === null) rec[o + STAGE] = -2;
  else putRef(rec, o + STAGE, st.stages, s);
  rec[o + PASSED] = b3(r.passed);
  rec[o + SCORE] = n(r.score);
  rec[o + WEIGHT] = n(r.weight);
  rec[o + JOULES] = n(r.joules);
  if (r.energy_source === null) rec[o + SOURCE] = -2;
  else putRef(rec, o + SOURCE, st.sources, s);
  rec[o + BELOW_FLOOR] = b3(r.below_floor);
  rec[o + LATENCY] = n(r.latency_ms);
  rec[o + TTFT] = n(r.ttft_ms);
  rec[o + TPOT] = n(r.tpot_ms);
  rec[o + PROMPT] = n(r.prompt_tokens);
  rec[o + COMPLETION] = n(r.completion_tokens);
  rec[o + COST] = n(r.cost_usd);
  rec[o + ATTEMPTS] = n(r.attempts);
  rec[o + RETRY] = n(r.retry_overhead_ms);
  if (r.trace === undefined) rec[o + TRACE] = -1;
  else {
    rec[o + TRACE] = st.traces.serial;
    rec[o + TRACE + 1] = st.traces.at - s;
  }
  // The scanner reads only numbers into a range (a null makes it decline the line): NaN is free to mean none.
  rec[o + RANGE_LOW] = r.joules_range === undefined ? NaN : r.joules_range.low;
  rec[o + RANGE_LOW + 1] = r.joules_range === undefined ? NaN : r.joules_range.high;
}

const orNull = (x: number): number | null => (x === x ? x : null);
const boolOf = (x: number): boolean | null => (x === 1 ? true : x === 0 ? false : null);

/**
 * The main thread's side: a record back into a case object, each string decoded from the main
 * thread's own bytes of the line the first time its id is seen, each trace parsed from them the
 * first time its serial is seen (the values are then the ones a scan of those bytes gives).
 */
export class RecordDecoder {
  private readonly datasets: string[] = [];
  private readonly stages: string[] = [];
  private readonly sources: string[] = [];
  private readonly traces = new Map<number, TraceEntry[]>();
  private readonly traceReader = new TraceCache();
  private buf: Uint8Array | null = null;
  private view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(8));

  /** The record at `o` into `r`, for the line at `buf[s, nl)`; false when something in it does not line up. */
  decode(rec: Float64Array, o: number, buf: Uint8Array, s: number, nl: number, r: CaseResult): boolean {
    r.phase = rec[o + PHASE] === 1 ? 'scored' : 'warmup';
    r.pass = rec[o + PASS]!;
    r.index = rec[o + INDEX]!;
    r.dataset = this.string(this.datasets, rec, o + DATASET, buf, s);
    r.stage = rec[o + STAGE] === -2 ? null : this.string(this.stages, rec, o + STAGE, buf, s);
    r.passed = boolOf(rec[o + PASSED]!);
    r.score = orNull(rec[o + SCORE]!);
    r.weight = orNull(rec[o + WEIGHT]!) as number;
    r.joules = orNull(rec[o + JOULES]!);
    r.energy_source = (rec[o + SOURCE] === -2 ? null : this.string(this.sources, rec, o + SOURCE, buf, s)) as CaseResult['energy_source'];
    r.below_floor = boolOf(rec[o + BELOW_FLOOR]!) as boolean;
    r.latency_ms = orNull(rec[o + LATENCY]!) as number;
    r.ttft_ms = orNull(rec[o + TTFT]!);
    r.tpot_ms = orNull(rec[o + TPOT]!);
    r.prompt_tokens = orNull(rec[o + PROMPT]!);
    r.completion_tokens = orNull(rec[o + COMPLETION]!);
    r.cost_usd = orNull(rec[o + COST]!);
    r.attempts = orNull(rec[o + ATTEMPTS]!) as number;
    r.retry_overhead_ms = orNull(rec[o + RETRY]!) as number;
    r.error = null;
    const low = rec[o + RANGE_LOW]!;
    r.joules_range = low === low ? { low, high: rec[o + RANGE_LOW + 1]! } : undefined;
    const serial = rec[o + TRACE]!;
    if (serial < 0) r.trace = undefined;
    else {
      let t = this.traces.get(serial);
      if (t === undefined) {
        if (buf !== this.buf) {
          this.buf = buf;
          this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
        }
        // The worker read the whole line; the trace is read again from this thread's copy of its bytes.
        if (this.traceReader.match(this.view, buf, s + rec[o + TRACE + 1]!, nl) < 0) return false;
        t = this.traceReader.value;
        if (this.traces.size >= 64) this.traces.clear();
        this.traces.set(serial, t);
      }
      r.trace = t;
    }
    return true;
  }

  private string(table: string[], rec: Float64Array, at: number, buf: Uint8Array, s: number): string {
    const id = rec[at]!;
    const cached = id >= 0 ? table[id] : undefined;
    if (cached !== undefined) return cached;
    const from = s + rec[at + 1]!;
    const value = Buffer.from(buf.buffer, buf.byteOffset + from, rec[at + 2]!).toString('utf8');
    if (id >= 0) table[id] = value;
    return value;
  }
}

export const RECORD_FIELDS = { START, END, OK } as const;
