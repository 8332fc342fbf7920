import { codeGenerationAllowed } from '../core/json-bytes.js';
import type { CaseResult } from '../core/types.js';
import { generateScan, type ScanFn, type ScanState } from './case-scan-code.js';
import { BOOL, bool, constant, Interned, lit, NUM, num, Q, skipMeta, skipString, skipStringOrNull, skipValue, T_NULL, TraceCache } from './scan-bytes.js';

/**
 * A field-selective scanner for results case lines as our own encoder writes them
 * (src/runner/case-line.ts: fixed key order, no whitespace). It reads the figures a report needs
 * straight from the line's bytes, into one reused object, without building a string or an object per
 * line: on a 1M-case rebuild `JSON.parse` of every line was the largest cost.
 *
 * It recognises only lines it can read completely and exactly as `JSON.parse` would: every key in the
 * encoder's order, every value of the type the encoder writes (string or null, number or null, boolean
 * or null, `error: null`, a trace of `{stage, hit, energy_uj}` entries), valid JSON strings and
 * numbers, nothing after the closing brace; a meter's `by_domain` and a target's `meta` checked as
 * JSON and skipped (see scanOptional). Anything else (a hand-edited or foreign line, escapes in a
 * string the report reads, `meta` with a load run's or a judge's block, `turns`, an error object, a
 * key repeated or out of order…) makes
 * `scan` return false, and the caller parses that line with `JSON.parse` (and its usual rules and
 * messages). The line's bytes are UTF-8 the caller checked (a chunk at a time, natively).
 *
 * Filled: the fields the aggregate reads (see {@link SCANNED_FIELDS}). `case_id`, `response` and
 * `expected` are checked but not read (left as `''`/`null`). `trace` is an array shared with other
 * lines that held the same trace bytes, frozen: a holder may keep it without copying.
 *
 * How it is fast (a 1M-case rebuild reads ~500 MB of these lines, and a byte looked at in JavaScript
 * costs about a nanosecond here): the scan is generated once as straight-line code (as the encoder
 * is, src/runner/case-line.ts), each key with its punctuation compared eight bytes at a time as one
 * double (src/report/scan-bytes.ts, `Lit`), one-digit numbers, `null` and booleans read in place;
 * strings the report reads (dataset, stage, energy source) are matched against the values already
 * seen, byte for byte, rather than decoded; a trace whose bytes equal one of the last few read is
 * compared, not parsed again. Where code generation is off, {@link interpretedScan} does the same
 * work through calls (tested to agree with it).
 */
export class CaseLineScanner {
  /** The last line scanned (valid after `scan` returned true, until the next call). */
  readonly r: CaseResult = newScanTarget();

  /** The strings and traces seen (read by the scan-ahead worker's record encoder, src/report/scan-record.ts). */
  readonly state: ScanState = { datasets: new Interned(), stages: new Interned(), sources: new Interned(), traces: new TraceCache() };
  private buf: Uint8Array | null = null;
  private view: DataView = new DataView(new ArrayBuffer(8));
  private readonly run: ScanFn;

  /** `interpreted`: the scan without generated code (what runs where code generation is off; tests). */
  constructor(opts: { interpreted?: boolean } = {}) {
    this.run = opts.interpreted === true || !codeGenerationAllowed() ? interpretedScan : generated();
  }

  /** Reads `buf[start, end)` (one line, no newline); false when the line is not one it fully recognises. */
  scan(buf: Uint8Array, start: number, end: number): boolean {
    return this.scanLine(buf, start, end) === end;
  }

  /**
   * Reads the line starting at `buf[start]` and ending at the first newline before `limit` (or at
   * `limit`): where it ends, or -1 when it is not a line the scanner fully recognises (the caller
   * then finds its end and parses it). Saves finding each line's end apart. `into`: an object of
   * {@link newScanTarget} to fill instead of `r` (the reorder window's, held without a copy).
   */
  scanLine(buf: Uint8Array, start: number, limit: number, into: CaseResult = this.r): number {
    if (buf !== this.buf) {
      this.buf = buf;
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    }
    if (start < 0 || limit > buf.length || start > limit) return -1;
    return this.run(this.state, buf, this.view, start, limit, into);
  }
}

/**
 * An object for the scanner to fill: every field a line holds, those it does not read (case_id,
 * response, expected) left as here. All of one shape, so the aggregate's reads of them stay monomorphic.
 */
export function newScanTarget(): CaseResult {
  return {
    record: 'case',
    phase: 'scored',
    pass: 0,
    index: 0,
    case_id: '',
    dataset: '',
    response: null,
    stage: null,
    expected: null,
    passed: null,
    score: null,
    weight: 0,
    joules: null,
    energy_source: 'none',
    below_floor: false,
    latency_ms: 0,
    ttft_ms: null,
    tpot_ms: null,
    prompt_tokens: null,
    completion_tokens: null,
    cost_usd: null,
    attempts: 0,
    retry_overhead_ms: 0,
    error: null,
    joules_range: undefined,
    trace: undefined,
  };
}

/** The CaseResult fields {@link CaseLineScanner} fills (a parity test compares them with `JSON.parse`). */
export const SCANNED_FIELDS = [
  'record', 'phase', 'pass', 'index', 'dataset', 'stage', 'passed', 'score', 'weight', 'joules', 'energy_source', 'below_floor',
  'latency_ms', 'ttft_ms', 'tpot_ms', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'attempts', 'retry_overhead_ms', 'error', 'joules_range', 'trace',
] as const;

let generatedScan: ScanFn | null = null;
function generated(): ScanFn {
  return (generatedScan ??= generateScan(scanEnd));
}

const T_HEAD_SCORED = constant('{"record":"case","phase":"scored","pass":');
const T_HEAD_WARMUP = constant('{"record":"case","phase":"warmup","pass":');
const T_INDEX = constant(',"index":');
const T_CASE_ID = constant(',"case_id":"');
const T_DATASET = constant(',"dataset":"');
const T_RESPONSE = constant(',"response":');
const T_STAGE = constant(',"stage":');
const T_EXPECTED = constant(',"expected":');
const T_PASSED = constant(',"passed":');
const T_SCORE = constant(',"score":');
const T_WEIGHT = constant(',"weight":');
const T_JOULES = constant(',"joules":');
const T_ENERGY_SOURCE = constant(',"energy_source":"');
const T_BELOW_FLOOR = constant(',"below_floor":');
const T_LATENCY = constant(',"latency_ms":');
const T_TTFT = constant(',"ttft_ms":');
const T_TPOT = constant(',"tpot_ms":');
const T_PROMPT = constant(',"prompt_tokens":');
const T_COMPLETION = constant(',"completion_tokens":');
const T_COST = constant(',"cost_usd":');
const T_ATTEMPTS = constant(',"attempts":');
const T_RETRY = constant(',"retry_overhead_ms":');
const T_ERROR_NULL_TRACE = constant(',"error":null,"trace":');
const T_ERROR_NULL_END = constant(',"error":null}');
const T_ERROR_NULL = constant(',"error":null');
const T_BY_DOMAIN = constant(',"by_domain":');
const T_TRACE = constant(',"trace":');
const T_META = constant(',"meta":');
const T_JOULES_RANGE = constant(',"joules_range":{"low":');
const T_HIGH = constant(',"high":');

const numOrNull = (): number | null => (NUM[0] === NUM[0] ? NUM[0]! : null);
const boolOrNull = (): boolean | null => (BOOL[0] === 1 ? true : BOOL[0] === 0 ? false : null);

/** A string the state's table reads (-1 on anything else) or `null`; the value in `out.value` ('' stands for null when `isNull`). */
function internedOrNull(v: DataView, b: Uint8Array, p: number, e: number, table: Interned): number {
  if (p >= 0 && p < e && b[p] === Q) {
    isNull = false;
    return table.read(b, p + 1, e);
  }
  isNull = true;
  return lit(v, p, e, T_NULL);
}
let isNull = false;

/**
 * The scan through calls, one reader per value: the reference for the generated scan
 * (src/report/case-scan-code.ts), which must accept and read exactly the same lines.
 */
export function interpretedScan(s: ScanState, b: Uint8Array, v: DataView, start: number, e: number, r: CaseResult): number {
  let p: number;
  if ((p = lit(v, start, e, T_HEAD_SCORED)) >= 0) r.phase = 'scored';
  else if ((p = lit(v, start, e, T_HEAD_WARMUP)) >= 0) r.phase = 'warmup';
  else return -1;
  if ((p = num(b, p, e)) < 0 || !Number.isInteger(NUM[0])) return -1;
  r.pass = NUM[0]!;
  if ((p = num(b, lit(v, p, e, T_INDEX), e)) < 0 || !Number.isInteger(NUM[0])) return -1;
  r.index = NUM[0]!;
  if ((p = skipString(b, lit(v, p, e, T_CASE_ID), e)) < 0) return -1;
  if ((p = s.datasets.read(b, lit(v, p, e, T_DATASET), e)) < 0) return -1;
  r.dataset = s.datasets.value;
  if ((p = skipStringOrNull(v, b, lit(v, p, e, T_RESPONSE), e)) < 0) return -1;
  if ((p = internedOrNull(v, b, lit(v, p, e, T_STAGE), e, s.stages)) < 0) return -1;
  r.stage = isNull ? null : s.stages.value;
  if ((p = skipStringOrNull(v, b, lit(v, p, e, T_EXPECTED), e)) < 0) return -1;
  if ((p = bool(v, b, lit(v, p, e, T_PASSED), e)) < 0) return -1;
  r.passed = boolOrNull();
  if ((p = num(b, lit(v, p, e, T_SCORE), e)) < 0) return -1;
  r.score = numOrNull();
  // weight, energy_source, below_floor, latency_ms, attempts and retry_overhead_ms are never null in a
  // case line (CaseResult): a null there is declined, and the results parser refuses the line.
  if ((p = num(b, lit(v, p, e, T_WEIGHT), e)) < 0 || isNaN(NUM[0]!)) return -1;
  r.weight = NUM[0]!;
  if ((p = num(b, lit(v, p, e, T_JOULES), e)) < 0) return -1;
  r.joules = numOrNull();
  if ((p = s.sources.read(b, lit(v, p, e, T_ENERGY_SOURCE), e)) < 0) return -1;
  r.energy_source = s.sources.value as CaseResult['energy_source'];
  if ((p = bool(v, b, lit(v, p, e, T_BELOW_FLOOR), e)) < 0 || boolOrNull() === null) return -1;
  r.below_floor = boolOrNull()!;
  if ((p = num(b, lit(v, p, e, T_LATENCY), e)) < 0 || isNaN(NUM[0]!)) return -1;
  r.latency_ms = NUM[0]!;
  if ((p = num(b, lit(v, p, e, T_TTFT), e)) < 0) return -1;
  r.ttft_ms = numOrNull();
  if ((p = num(b, lit(v, p, e, T_TPOT), e)) < 0) return -1;
  r.tpot_ms = numOrNull();
  if ((p = num(b, lit(v, p, e, T_PROMPT), e)) < 0) return -1;
  r.prompt_tokens = numOrNull();
  if ((p = num(b, lit(v, p, e, T_COMPLETION), e)) < 0) return -1;
  r.completion_tokens = numOrNull();
  if ((p = num(b, lit(v, p, e, T_COST), e)) < 0) return -1;
  r.cost_usd = numOrNull();
  if ((p = num(b, lit(v, p, e, T_ATTEMPTS), e)) < 0 || isNaN(NUM[0]!)) return -1;
  r.attempts = NUM[0]!;
  if ((p = num(b, lit(v, p, e, T_RETRY), e)) < 0 || isNaN(NUM[0]!)) return -1;
  r.retry_overhead_ms = NUM[0]!;
  return scanEnd(s, b, v, p, e, r);
}

/**
 * `,"error":null`, then the closing brace and the line's end (a newline or `e`), or what a line may
 * hold after it (see {@link scanOptional}); shared by both scans: where the line ends, or -1.
 */
export function scanEnd(s: ScanState, b: Uint8Array, v: DataView, p: number, e: number, r: CaseResult): number {
  r.error = null;
  r.joules_range = undefined; // absent unless read below (the object is reused from line to line)
  const t = lit(v, p, e, T_ERROR_NULL_TRACE);
  if (t >= 0) {
    const q = s.traces.match(v, b, t, e);
    if (q < 0) return -1;
    r.trace = s.traces.value;
    return afterTrace(b, v, q, e);
  }
  const end = lit(v, p, e, T_ERROR_NULL_END);
  if (end < 0) return scanOptional(s, b, v, p, e, r);
  if (end !== e && b[end] !== 0x0a) return -1;
  r.trace = undefined; // absent, as the aggregate reads it (no delete: the object keeps its shape)
  return end;
}

/**
 * `,"error":null`, then, in the encoder's order, what a line often holds:
 * - a meter's `by_domain`: an object, checked as JSON and skipped (the report does not read it);
 * - a modelled energy's `joules_range`: read (the aggregate sums it);
 * - a trace: read as above;
 * - a target's `meta`: an object, checked and skipped, unless it holds `load` or `judge` (the rebuild
 *   takes those from the parsed line);
 * then the closing brace. Every HTTP target's line has `meta`, every RAPL or NVML run's `by_domain`,
 * a cascade's neural answers a trace and `meta`: those lines went through JSON.parse, 5× the cost of
 * a line scanned. `turns` and anything else: -1.
 */
function scanOptional(s: ScanState, b: Uint8Array, v: DataView, p: number, e: number, r: CaseResult): number {
  p = lit(v, p, e, T_ERROR_NULL);
  if (p < 0) return -1;
  let q = lit(v, p, e, T_BY_DOMAIN);
  // An object, as the results parser requires (src/runner/case-check.ts); any other value: the parser's refusal.
  if (q >= 0 && (q >= e || b[q] !== 0x7b || (p = skipValue(b, q, e)) < 0)) return -1;
  q = lit(v, p, e, T_JOULES_RANGE);
  if (q >= 0) {
    // `{"low":N,"high":N}` as the runner writes it (the aggregate sums both); null or anything else: -1.
    if ((q = num(b, q, e)) < 0) return -1;
    const low = NUM[0]!;
    if ((q = num(b, lit(v, q, e, T_HIGH), e)) < 0) return -1;
    const high = NUM[0]!;
    if (low !== low || high !== high || q >= e || b[q] !== 0x7d) return -1;
    p = q + 1;
    r.joules_range = { low, high };
  }
  q = lit(v, p, e, T_TRACE);
  if (q >= 0) {
    if ((q = s.traces.match(v, b, q, e)) < 0) return -1;
    r.trace = s.traces.value;
    return afterTrace(b, v, q, e);
  }
  r.trace = undefined;
  return afterTrace(b, v, p, e);
}

/** After the trace (or where it would be): a target's `meta` (checked and skipped), then the closing brace and the line's end. */
function afterTrace(b: Uint8Array, v: DataView, p: number, e: number): number {
  const q = lit(v, p, e, T_META);
  if (q >= 0 && (p = skipMeta(b, q, e)) < 0) return -1;
  if (p >= e || b[p] !== 0x7d) return -1;
  p++;
  if (p !== e && b[p] !== 0x0a) return -1;
  return p;
}
