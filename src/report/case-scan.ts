import type { CaseResult } from '../core/types.js';

/**
 * A field-selective scanner for results case lines as our own encoder writes them
 * (src/runner/case-line.ts: fixed key order, no whitespace). It reads the figures a report needs
 * straight from the line's bytes, into one reused object, without building a string or an object per
 * line: on a 1M-case rebuild `JSON.parse` of every line was the largest cost.
 *
 * It recognises only lines it can read completely and exactly as `JSON.parse` would: every key in the
 * encoder's order, every value of the type the encoder writes (string or null, number or null, boolean
 * or null, `error: null`, a trace of `{stage, hit, energy_uj}` entries), valid JSON strings and
 * numbers, nothing after the closing brace. Anything else (a hand-edited or foreign line, escapes in
 * a string the report reads, `meta`, `turns`, an error object…) makes `scan` return false, and the
 * caller parses that line with `JSON.parse` (and its usual rules and messages).
 *
 * Filled: the fields the aggregate reads (see {@link SCANNED_FIELDS}). `case_id`, `response` and
 * `expected` are checked but not read (left as `''`/`null`).
 */
export class CaseLineScanner {
  /** The last line scanned (valid after `scan` returned true, until the next call). */
  readonly r: CaseResult = {
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
  };
  private readonly traceEntries: { stage: string; hit: boolean; energy_uj: number | null }[] = [];
  private readonly trace: { stage: string; hit: boolean; energy_uj: number | null }[] = [];
  /** The bytes of the last trace read in full (the first `lastTraceBytes`; -1: none). */
  private readonly lastTrace = Buffer.alloc(1024);
  private lastTraceBytes = -1;
  private readonly datasets = new Interned();
  private readonly stages = new Interned();
  private readonly sources = new Interned();

  /** Reads `buf[start, end)` (one line, no newline); false when the line is not one it fully recognises. */
  scan(buf: Uint8Array, start: number, end: number): boolean {
    if (buf.buffer !== view.buffer) view = new DataView(buf.buffer);
    at = buf.byteOffset;
    b = buf;
    p = start;
    e = end;
    bad = false;
    const r = this.r;
    if (!token(T_RECORD)) return false;
    if (token(T_SCORED)) r.phase = 'scored';
    else if (token(T_WARMUP)) r.phase = 'warmup';
    else return false;
    if (!token(T_PASS)) return false;
    const pass = num();
    if (bad || pass === null || !Number.isInteger(pass)) return false;
    if (!token(T_INDEX)) return false;
    const index = num();
    if (bad || index === null || !Number.isInteger(index)) return false;
    r.pass = pass;
    r.index = index;
    if (!token(T_CASE_ID) || b[p++] !== Q || !skipString()) return false;
    if (!token(T_DATASET) || b[p++] !== Q) return false;
    const dataset = this.datasets.read();
    if (dataset === null) return false;
    r.dataset = dataset;
    if (!token(T_RESPONSE) || !skipStringOrNull()) return false;
    if (!token(T_STAGE)) return false;
    const stage = this.stringOrNull(this.stages);
    if (bad) return false;
    r.stage = stage;
    if (!token(T_EXPECTED) || !skipStringOrNull()) return false;
    if (!token(T_PASSED)) return false;
    r.passed = boolOrNull();
    if (!token(T_SCORE)) return false;
    r.score = num();
    if (!token(T_WEIGHT)) return false;
    r.weight = num() as number; // null as JSON.parse gives it
    if (!token(T_JOULES)) return false;
    r.joules = num();
    if (!token(T_ENERGY_SOURCE)) return false;
    r.energy_source = this.stringOrNull(this.sources) as CaseResult['energy_source'];
    if (!token(T_BELOW_FLOOR)) return false;
    r.below_floor = boolOrNull() as boolean;
    if (!token(T_LATENCY)) return false;
    r.latency_ms = num() as number;
    if (!token(T_TTFT)) return false;
    r.ttft_ms = num();
    if (!token(T_TPOT)) return false;
    r.tpot_ms = num();
    if (!token(T_PROMPT)) return false;
    r.prompt_tokens = num();
    if (!token(T_COMPLETION)) return false;
    r.completion_tokens = num();
    if (!token(T_COST)) return false;
    r.cost_usd = num();
    if (!token(T_ATTEMPTS)) return false;
    r.attempts = num() as number;
    if (!token(T_RETRY)) return false;
    r.retry_overhead_ms = num() as number;
    if (bad || !token(T_ERROR_NULL)) return false;
    if (token(T_TRACE)) {
      if (!this.readTrace()) return false;
      r.trace = this.trace;
    } else if (r.trace !== undefined) {
      delete r.trace;
    }
    return !bad && p === e - 1 && b[p] === 0x7d;
  }

  private stringOrNull(cache: Interned): string | null {
    if (b[p] === Q) {
      p++;
      const s = cache.read();
      if (s === null) bad = true;
      return s;
    }
    if (!token(T_NULL)) bad = true;
    return null;
  }

  /**
   * `[{"stage":S,"hit":B,"energy_uj":N},…]` into reused entries. A trace whose bytes are those of the
   * last one read (a cascade's stage energies are often the same from case to case) is not read again.
   */
  private readTrace(): boolean {
    const n = e - 1 - p;
    const last = this.lastTrace;
    if (n > 0 && n === this.lastTraceBytes && Buffer.prototype.compare.call(last, b, p, e - 1, 0, n) === 0) {
      p = e - 1;
      return true;
    }
    this.lastTraceBytes = -1;
    const out = this.trace;
    const s = p;
    let count = 0;
    if (b[p] !== 0x5b) return false;
    p++;
    if (b[p] === 0x5d) p++;
    else {
      for (;;) {
        if (!token(T_TRACE_STAGE) || b[p++] !== Q) return false;
        const stage = this.stages.read();
        if (stage === null || !token(T_TRACE_HIT)) return false;
        const hit = boolOrNull();
        if (!token(T_TRACE_ENERGY)) return false;
        const energy = num();
        if (bad || b[p++] !== 0x7d) return false;
        let entry = this.traceEntries[count];
        if (entry === undefined) this.traceEntries.push((entry = { stage, hit: hit as boolean, energy_uj: energy }));
        entry.stage = stage;
        entry.hit = hit as boolean;
        entry.energy_uj = energy;
        if (count < out.length) out[count] = entry;
        else out.push(entry);
        count++;
        const c = b[p++];
        if (c === 0x5d) break;
        if (c !== 0x2c) return false;
      }
    }
    if (out.length !== count) out.length = count;
    if (p === e - 1 && p - s <= last.length) {
      Buffer.prototype.copy.call(b, last, 0, s, p);
      this.lastTraceBytes = p - s;
    }
    return true;
  }
}

/** The CaseResult fields {@link CaseLineScanner} fills (a parity test compares them with `JSON.parse`). */
export const SCANNED_FIELDS = [
  'record', 'phase', 'pass', 'index', 'dataset', 'stage', 'passed', 'score', 'weight', 'joules', 'energy_source', 'below_floor',
  'latency_ms', 'ttft_ms', 'tpot_ms', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'attempts', 'retry_overhead_ms', 'error', 'trace',
] as const;

// The scan's state: module variables rather than fields or closures, which V8 keeps in registers.
var b: Uint8Array = Buffer.alloc(0);
var p = 0;
var e = 0;
var bad = false;
/** A view of `b`'s memory, for reading a key's bytes four at a time; `at`: `b`'s offset in it. */
var view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(8));
var at = 0;

const Q = 0x22;
/** A constant run of bytes: as 32-bit little-endian words, then the 0–3 bytes left over. */
interface Tok {
  n: number;
  words: Int32Array;
  bytes: Uint8Array;
}
const bytes = (s: string): Tok => {
  const raw = Buffer.from(s, 'latin1');
  const words = new Int32Array(raw.length >>> 2);
  for (let i = 0; i < words.length; i++) words[i] = raw.readInt32LE(i * 4);
  return { n: raw.length, words, bytes: new Uint8Array(raw) };
};
const T_RECORD = bytes('{"record":"case","phase":');
const T_SCORED = bytes('"scored"');
const T_WARMUP = bytes('"warmup"');
const T_PASS = bytes(',"pass":');
const T_INDEX = bytes(',"index":');
const T_CASE_ID = bytes(',"case_id":');
const T_DATASET = bytes(',"dataset":');
const T_RESPONSE = bytes(',"response":');
const T_STAGE = bytes(',"stage":');
const T_EXPECTED = bytes(',"expected":');
const T_PASSED = bytes(',"passed":');
const T_SCORE = bytes(',"score":');
const T_WEIGHT = bytes(',"weight":');
const T_JOULES = bytes(',"joules":');
const T_ENERGY_SOURCE = bytes(',"energy_source":');
const T_BELOW_FLOOR = bytes(',"below_floor":');
const T_LATENCY = bytes(',"latency_ms":');
const T_TTFT = bytes(',"ttft_ms":');
const T_TPOT = bytes(',"tpot_ms":');
const T_PROMPT = bytes(',"prompt_tokens":');
const T_COMPLETION = bytes(',"completion_tokens":');
const T_COST = bytes(',"cost_usd":');
const T_ATTEMPTS = bytes(',"attempts":');
const T_RETRY = bytes(',"retry_overhead_ms":');
const T_ERROR_NULL = bytes(',"error":null');
const T_TRACE = bytes(',"trace":');
const T_TRACE_STAGE = bytes('{"stage":');
const T_TRACE_HIT = bytes(',"hit":');
const T_TRACE_ENERGY = bytes(',"energy_uj":');
const T_NULL = bytes('null');
const T_TRUE = bytes('true');
const T_FALSE = bytes('false');

/** Consumes `t` when the bytes at `p` are exactly `t` (compared four at a time). */
function token(t: Tok): boolean {
  const n = t.n;
  if (p + n > e) return false;
  const w = t.words;
  const base = at + p;
  for (let i = 0; i < w.length; i++) if (view.getInt32(base + 4 * i, true) !== w[i]) return false;
  const tb = t.bytes;
  for (let i = w.length * 4; i < n; i++) if (b[p + i] !== tb[i]) return false;
  p += n;
  return true;
}

function boolOrNull(): boolean | null {
  if (token(T_TRUE)) return true;
  if (token(T_FALSE)) return false;
  if (token(T_NULL)) return null;
  bad = true;
  return null;
}

function skipStringOrNull(): boolean {
  if (b[p] === Q) {
    p++;
    return skipString();
  }
  return token(T_NULL);
}

/**
 * Past a JSON string's closing quote (`p` just after the opening one), checking it as JSON.parse
 * would: no raw control character, only JSON's escapes. UTF-8 was checked for the whole chunk.
 */
function skipString(): boolean {
  while (p < e) {
    const c = b[p++]!;
    if (c === Q) return true;
    if (c < 0x20) return false;
    if (c === 0x5c) {
      if (p >= e) return false;
      const x = b[p++]!;
      if (x === 0x75) {
        if (p + 4 > e) return false;
        for (let i = 0; i < 4; i++) if (!isHex(b[p++]!)) return false;
      } else if (x !== Q && x !== 0x5c && x !== 0x2f && x !== 0x62 && x !== 0x66 && x !== 0x6e && x !== 0x72 && x !== 0x74) return false;
    }
  }
  return false;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Exact powers of ten (10^0 … 10^22 are exactly representable doubles). */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/**
 * A JSON number or `null` at `p` (sets `bad` for anything else). Exact: a significand below 2^53 with
 * at most 22 decimal places or exponent is one correctly rounded multiplication or division of two
 * exact doubles (Clinger's fast path), which is the value JSON.parse gives; any other number is
 * converted from its text by `Number`, as JSON.parse would.
 */
function num(): number | null {
  const s = p;
  let c = b[p];
  if (c === 0x6e) {
    if (token(T_NULL)) return null;
    bad = true;
    return null;
  }
  let neg = false;
  if (c === 0x2d) {
    neg = true;
    c = b[++p];
  }
  let m = 0;
  let exact = true;
  let exp = 0;
  if (c === 0x30) {
    c = b[++p];
  } else if (c !== undefined && c >= 0x31 && c <= 0x39) {
    while (c !== undefined && c >= 0x30 && c <= 0x39) {
      if (m < 9e14) m = m * 10 + (c - 0x30);
      else exact = false;
      c = b[++p];
    }
  } else {
    bad = true;
    return null;
  }
  if (c === 0x2e) {
    c = b[++p];
    if (c === undefined || c < 0x30 || c > 0x39) {
      bad = true;
      return null;
    }
    while (c !== undefined && c >= 0x30 && c <= 0x39) {
      if (m < 9e14) {
        m = m * 10 + (c - 0x30);
        exp--;
      } else exact = false;
      c = b[++p];
    }
  }
  if (c === 0x65 || c === 0x45) {
    c = b[++p];
    let eneg = false;
    if (c === 0x2b || c === 0x2d) {
      eneg = c === 0x2d;
      c = b[++p];
    }
    if (c === undefined || c < 0x30 || c > 0x39) {
      bad = true;
      return null;
    }
    let x = 0;
    while (c !== undefined && c >= 0x30 && c <= 0x39) {
      if (x < 1e6) x = x * 10 + (c - 0x30);
      c = b[++p];
    }
    exp += eneg ? -x : x;
  }
  if (p > e) {
    bad = true;
    return null;
  }
  if (exact && exp >= -22 && exp <= 22) {
    const v = exp < 0 ? m / POW10[-exp]! : m * POW10[exp]!;
    return neg ? -v : v;
  }
  // Validated above as a JSON number, so Number reads it as JSON.parse would.
  return Number(Buffer.from(b.buffer, b.byteOffset + s, p - s).toString('latin1'));
}

/**
 * A few strings a field keeps taking (datasets, stages, energy sources), recognised by their bytes so
 * the same value is not decoded again on every line. A string with an escape is not read here (null).
 */
class Interned {
  private readonly keys: Uint8Array[] = [];
  private readonly values: string[] = [];
  /** The string at `p` (just after its opening quote), moving `p` past its closing quote. */
  read(): string | null {
    const s = p;
    while (p < e) {
      const c = b[p]!;
      if (c === Q) break;
      if (c < 0x20 || c === 0x5c) return null;
      p++;
    }
    if (p >= e) return null;
    const n = p - s;
    p++;
    const keys = this.keys;
    outer: for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      if (key.length !== n) continue;
      for (let i = 0; i < n; i++) if (key[i] !== b[s + i]) continue outer;
      return this.values[k]!;
    }
    const value = Buffer.from(b.buffer, b.byteOffset + s, n).toString('utf8');
    if (keys.length < 64) {
      keys.push(new Uint8Array(b.subarray(s, s + n)));
      this.values.push(value);
    }
    return value;
  }
}
