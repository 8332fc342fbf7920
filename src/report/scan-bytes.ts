/**
 * Byte-level readers for {@link CaseLineScanner} (src/report/case-scan.ts): constant runs, JSON
 * numbers, strings, interned values and cascade traces, read from a line's bytes exactly as
 * `JSON.parse` reads them, or refused. Each returns where it stopped (-1: not one it reads), its value
 * in a slot beside it, so that no call makes an object and no double is boxed on the way.
 */

/** One entry of a cascade's trace, as a case line holds it. */
export type TraceEntry = { stage: string; hit: boolean; energy_uj: number | null };

/** `NUM[0]`: the value of the last number {@link num} read (NaN for `null`: no JSON number is NaN). */
export const NUM = new Float64Array(1);

export const Q = 0x22;

/**
 * A constant ASCII run (a key with its punctuation), compared eight bytes at a time: each eight bytes
 * as the double they spell (little-endian), the last eight overlapping the ones before when the length
 * is not a multiple of eight. Exact: bytes of 0x20–0x7e make a normal double (its top byte holds the
 * sign and the high exponent bits, never all ones nor all zero), so a double read from the line equals
 * it only when its bits, hence its bytes, are the same (a NaN equals nothing). Runs under eight bytes
 * are compared as two 32-bit words the same way (exact for any bits).
 */
export interface Lit {
  text: string;
  n: number;
  /** n ≥ 8: the offsets compared as doubles (0, 8, …, and n - 8) and the doubles there. */
  at: number[];
  f: Float64Array;
  /** n < 8: the 32-bit words at 0 and n - 4. */
  w: Int32Array;
}

export function constant(text: string): Lit {
  const raw = Buffer.from(text, 'latin1');
  for (const c of raw) if (c < 0x20 || c > 0x7e) throw new RangeError(`not printable ASCII: ${text}`);
  const n = raw.length;
  if (n < 4) throw new RangeError(`a constant under 4 bytes: ${text}`);
  const at: number[] = [];
  if (n >= 8) {
    for (let i = 0; i + 8 <= n; i += 8) at.push(i);
    if (n % 8 !== 0) at.push(n - 8);
    return { text, n, at, f: Float64Array.from(at, (i) => raw.readDoubleLE(i)), w: new Int32Array(0) };
  }
  return { text, n, at, f: new Float64Array(0), w: Int32Array.of(raw.readInt32LE(0), raw.readInt32LE(n - 4)) };
}

/** Past `t` when the bytes at `p` (before `e`) are exactly `t`; else -1 (also for p < 0). `v` views the line's buffer from its start. */
export function lit(v: DataView, p: number, e: number, t: Lit): number {
  const n = t.n;
  if (p < 0 || p + n > e) return -1;
  const f = t.f;
  if (f.length > 0) {
    const last = f.length - 1;
    for (let i = 0; i < last; i++) if (v.getFloat64(p + 8 * i, true) !== f[i]) return -1;
    if (v.getFloat64(p + n - 8, true) !== f[last]) return -1;
  } else {
    const w = t.w;
    if (v.getInt32(p, true) !== w[0] || v.getInt32(p + n - 4, true) !== w[1]) return -1;
  }
  return p + n;
}

export const T_NULL = constant('null');
export const T_TRUE = constant('true');
export const T_FALSE = constant('false');
/** `null`, `true` and the first four bytes of `false` as little-endian 32-bit words. */
export const W_NULL = T_NULL.w[0]!;
export const W_TRUE = T_TRUE.w[0]!;
export const W_FALS = T_FALSE.w[0]!;

/** `BOOL[0]`: the last boolean {@link bool} read: 1 true, 0 false, -1 null. */
export const BOOL = new Int8Array(1);

/** true, false or null at `p` into `BOOL[0]`; past it, or -1. */
export function bool(v: DataView, b: Uint8Array, p: number, e: number): number {
  if (p < 0 || p + 4 > e) return -1;
  const x = v.getInt32(p, true);
  if (x === W_TRUE) {
    BOOL[0] = 1;
    return p + 4;
  }
  if (x === W_NULL) {
    BOOL[0] = -1;
    return p + 4;
  }
  if (x === W_FALS && p + 5 <= e && b[p + 4] === 0x65) {
    BOOL[0] = 0;
    return p + 5;
  }
  return -1;
}

/** Past a JSON string or `null` at `p`, or -1. */
export function skipStringOrNull(v: DataView, b: Uint8Array, p: number, e: number): number {
  if (p >= 0 && p < e && b[p] === Q) return skipString(b, p + 1, e);
  return lit(v, p, e, T_NULL);
}

/**
 * Past a JSON string's closing quote (`p` just after the opening one), checking it as JSON.parse
 * would: no raw control character, only JSON's escapes (UTF-8 was checked for the whole chunk); -1
 * when it is not one.
 */
export function skipString(b: Uint8Array, p: number, e: number): number {
  if (p < 0) return -1;
  while (p < e) {
    const c = b[p++]!;
    if (c === Q) return p;
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      if (p >= e) return -1;
      const x = b[p++]!;
      if (x === 0x75) {
        if (p + 4 > e) return -1;
        for (let i = 0; i < 4; i++) if (!isHex(b[p++]!)) return -1;
      } else if (x !== Q && x !== 0x5c && x !== 0x2f && x !== 0x62 && x !== 0x66 && x !== 0x6e && x !== 0x72 && x !== 0x74) return -1;
    }
  }
  return -1;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Exact powers of ten (10^0 … 10^22 are exactly representable doubles). */
const POW10 = Float64Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/**
 * A JSON number or `null` at `p` into `NUM[0]` (NaN for null); past it, or -1 for anything else.
 * Exact: a significand below 2^53 with at most 22 decimal places or exponent is one correctly rounded
 * multiplication or division of two exact doubles (Clinger's fast path), which is the value JSON.parse
 * gives; any other number is converted from its text by `Number`, as JSON.parse would. A number too
 * large for a double (JSON.parse's Infinity) is -1.
 */
export function num(b: Uint8Array, p: number, e: number): number {
  if (p < 0) return -1;
  const s = p;
  let c = p < e ? b[p]! : -1;
  if (c === 0x6e) {
    if (p + 4 <= e && b[p + 1] === 0x75 && b[p + 2] === 0x6c && b[p + 3] === 0x6c) {
      NUM[0] = NaN;
      return p + 4;
    }
    return -1;
  }
  let neg = false;
  if (c === 0x2d) {
    neg = true;
    c = ++p < e ? b[p]! : -1;
  }
  let m = 0;
  let exact = true;
  let exp = 0;
  if (c === 0x30) {
    c = ++p < e ? b[p]! : -1;
  } else if (c >= 0x31 && c <= 0x39) {
    while (c >= 0x30 && c <= 0x39) {
      if (m < 9e14) m = m * 10 + (c - 0x30);
      else exact = false;
      c = ++p < e ? b[p]! : -1;
    }
  } else return -1;
  if (c === 0x2e) {
    c = ++p < e ? b[p]! : -1;
    if (c < 0x30 || c > 0x39) return -1;
    while (c >= 0x30 && c <= 0x39) {
      if (m < 9e14) {
        m = m * 10 + (c - 0x30);
        exp--;
      } else exact = false;
      c = ++p < e ? b[p]! : -1;
    }
  }
  if (c === 0x65 || c === 0x45) {
    c = ++p < e ? b[p]! : -1;
    let eneg = false;
    if (c === 0x2b || c === 0x2d) {
      eneg = c === 0x2d;
      c = ++p < e ? b[p]! : -1;
    }
    if (c < 0x30 || c > 0x39) return -1;
    let x = 0;
    while (c >= 0x30 && c <= 0x39) {
      if (x < 1e6) x = x * 10 + (c - 0x30);
      c = ++p < e ? b[p]! : -1;
    }
    exp += eneg ? -x : x;
  }
  if (exact && exp >= -22 && exp <= 22) {
    const v = exp < 0 ? m / POW10[-exp]! : m * POW10[exp]!;
    NUM[0] = neg ? -v : v;
  } else {
    // Validated above as a JSON number, so Number reads it as JSON.parse would.
    const v = Number(Buffer.from(b.buffer, b.byteOffset + s, p - s).toString('latin1'));
    // Too large for a double (1e400): JSON.parse says Infinity, which no encoder writes; the results
    // parser refuses such a line (src/runner/case-check.ts), so the scanner leaves it to that refusal.
    if (v === Infinity || v === -Infinity) return -1;
    NUM[0] = v;
  }
  return p;
}

/**
 * A few strings a field keeps taking (datasets, stages, energy sources), recognised by their bytes so
 * the same value is not decoded again on every line. A string with an escape or a control character
 * is not read here (-1: the line goes to JSON.parse).
 */
export class Interned {
  /** The string read last (valid after `read` returned ≥ 0), where its bytes start and how many, its id (-1: not kept). */
  value = '';
  at = 0;
  len = 0;
  id = -1;
  private readonly keys: Uint8Array[] = [];
  private readonly values: string[] = [];
  /** The entry that matched last: tried first. */
  private last = -1;

  /** The string at `p` (just after its opening quote) into `value`; past its closing quote, or -1. */
  read(b: Uint8Array, p: number, e: number): number {
    if (p < 0) return -1;
    const last = this.last;
    if (last >= 0) {
      // The value before, again (a dataset's cases come in a row): its bytes and the closing quote.
      const key = this.keys[last]!;
      const n = key.length;
      if (p + n < e && b[p + n] === Q) {
        let i = 0;
        while (i < n && key[i] === b[p + i]) i++;
        if (i === n) {
          this.value = this.values[last]!;
          this.at = p;
          this.len = n;
          this.id = last;
          return p + n + 1;
        }
      }
    }
    const s = p;
    while (p < e) {
      const c = b[p]!;
      if (c === Q) break;
      if (c < 0x20 || c === 0x5c) return -1;
      p++;
    }
    if (p >= e) return -1;
    const n = p - s;
    this.at = s;
    this.len = n;
    const keys = this.keys;
    outer: for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      if (key.length !== n) continue;
      for (let i = 0; i < n; i++) if (key[i] !== b[s + i]) continue outer;
      this.value = this.values[k]!;
      this.last = k;
      this.id = k;
      return p + 1;
    }
    const value = Buffer.from(b.buffer, b.byteOffset + s, n).toString('utf8');
    this.id = -1;
    if (keys.length < 64) {
      this.last = this.id = keys.length;
      keys.push(new Uint8Array(b.subarray(s, s + n)));
      this.values.push(value);
    }
    this.value = value;
    return p + 1;
  }
}

const T_TRACE_STAGE = constant('{"stage":"');
const T_TRACE_HIT = constant(',"hit":');
const T_TRACE_ENERGY = constant(',"energy_uj":');

/**
 * The last few distinct traces read, by their exact bytes (`[` to `]`), each with its entries: a
 * trace whose bytes equal one of them is compared, not read again (a cascade's stage energies repeat
 * from case to case). An entry array is frozen once made: a holder may keep it without copying.
 */
export class TraceCache {
  private static readonly SIZE = 8;
  /** The trace matched last (valid after `match` returned ≥ 0), where it starts, and its serial (a new one for each trace read in full). */
  value: TraceEntry[] = [];
  at = 0;
  serial = 0;
  private readonly serials: number[] = [];
  private made = 0;
  /**
   * Each trace's bytes, and its whole eight-byte groups as doubles, compared as doubles: exact here,
   * since a trace read holds no zero byte (so no ±0, the one pair of doubles equal with other bits;
   * a NaN equals nothing and only makes the trace read again).
   */
  private readonly bytes: Uint8Array[] = [];
  private readonly doubles: Float64Array[] = [];
  private readonly lengths: number[] = [];
  private readonly values: TraceEntry[][] = [];
  private next = 0;
  /** The entry that matched last: tried first. */
  private last = 0;
  private readonly stages = new Interned();

  /**
   * The trace at `p` (its `[`): where it ends (just after its `]`), the trace in `value`; -1 when it
   * is not a trace the scanner reads. What follows it is the caller's to check.
   */
  match(v: DataView, b: Uint8Array, p: number, e: number): number {
    const lengths = this.lengths;
    const count = lengths.length;
    for (let j = 0; j < count; j++) {
      const k = (this.last + j) % count;
      const close = p + lengths[k]!;
      if (close > e) continue;
      const f = this.doubles[k]!;
      let i = 0;
      while (i < f.length && v.getFloat64(p + 8 * i, true) === f[i]) i++;
      if (i < f.length) continue;
      const bytes = this.bytes[k]!;
      let q = 8 * f.length;
      while (q < bytes.length && b[p + q] === bytes[q]) q++;
      if (q < bytes.length) continue;
      this.last = k;
      this.value = this.values[k]!;
      this.at = p;
      this.serial = this.serials[k]!;
      return close;
    }
    // Not one of them: read in full.
    const end = this.read(v, b, p, e);
    if (end < 0) return -1;
    const trace = this.readValue;
    const bytes = Uint8Array.prototype.slice.call(b, p, end); // a copy: a Buffer's own slice is a view of the reused chunk
    const k = this.next;
    this.next = (k + 1) % TraceCache.SIZE;
    this.bytes[k] = bytes;
    this.doubles[k] = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 8 * (bytes.length >>> 3)));
    this.lengths[k] = bytes.length;
    this.values[k] = trace;
    this.serials[k] = ++this.made;
    this.last = k;
    this.value = trace;
    this.at = p;
    this.serial = this.made;
    return end;
  }

  /** The trace {@link read} read last. */
  private readValue: TraceEntry[] = [];

  /** `[{"stage":S,"hit":B,"energy_uj":N},…]` at `p`, read no further than `end`: past its `]` (the entries in `readValue`), or -1. */
  private read(v: DataView, b: Uint8Array, p: number, end: number): number {
    const out: TraceEntry[] = [];
    if (p >= end || b[p] !== 0x5b) return -1;
    p++;
    if (p < end && b[p] === 0x5d) p++;
    else {
      for (;;) {
        if ((p = this.stages.read(b, lit(v, p, end, T_TRACE_STAGE), end)) < 0) return -1;
        const stage = this.stages.value;
        // `hit` is true or false (a null one is refused by the results parser, src/runner/case-check.ts).
        if ((p = bool(v, b, lit(v, p, end, T_TRACE_HIT), end)) < 0 || BOOL[0] === -1) return -1;
        const hit = BOOL[0] === 1;
        if ((p = num(b, lit(v, p, end, T_TRACE_ENERGY), end)) < 0 || p >= end || b[p++] !== 0x7d) return -1;
        const energy = NUM[0]!;
        out.push(Object.freeze({ stage, hit, energy_uj: energy === energy ? energy : null }));
        const c = p < end ? b[p++] : -1;
        if (c === 0x5d) break;
        if (c !== 0x2c) return -1;
      }
    }
    this.readValue = Object.freeze(out) as unknown as TraceEntry[];
    return p;
  }
}

/** How deep {@link skipValue} follows nested objects and arrays before it declines the line. */
const MAX_DEPTH = 32;

/**
 * Past one JSON value at `p` (an object, array, string, number, `true`, `false` or `null`, written
 * with no whitespace, as JSON.stringify writes it), checked as JSON.parse would check it and not
 * read; -1 for anything else, or nesting deeper than {@link MAX_DEPTH}. For the fields the report does
 * not read (a meter's `by_domain`, a target's `meta`).
 */
export function skipValue(b: Uint8Array, p: number, e: number, depth = 0): number {
  if (p < 0 || p >= e) return -1;
  const c = b[p]!;
  if (c === Q) return skipString(b, p + 1, e);
  if (c === 0x7b || c === 0x5b) {
    if (depth >= MAX_DEPTH) return -1;
    const close = c === 0x7b ? 0x7d : 0x5d;
    p++;
    if (p < e && b[p] === close) return p + 1;
    for (;;) {
      if (c === 0x7b) {
        if (p >= e || b[p] !== Q) return -1;
        p = skipString(b, p + 1, e);
        if (p < 0 || p >= e || b[p] !== 0x3a) return -1;
        p++;
      }
      p = skipValue(b, p, e, depth + 1);
      if (p < 0 || p >= e) return -1;
      const d = b[p++]!;
      if (d === close) return p;
      if (d !== 0x2c) return -1;
    }
  }
  if (c === 0x74) return p + 4 <= e && b[p + 1] === 0x72 && b[p + 2] === 0x75 && b[p + 3] === 0x65 ? p + 4 : -1;
  if (c === 0x66) return p + 5 <= e && b[p + 1] === 0x61 && b[p + 2] === 0x6c && b[p + 3] === 0x73 && b[p + 4] === 0x65 ? p + 5 : -1;
  // A number, or null (num reads both).
  return num(b, p, e);
}

/**
 * Past a target's `meta` object at `p`, checked as {@link skipValue} checks it, or -1. Also -1 when a
 * key at its top level is `load` or `judge` (a load run's per-request record and a judge's verdict:
 * the rebuild reads those from the parsed line), or is spelled with an escape (which could spell
 * either).
 */
export function skipMeta(b: Uint8Array, p: number, e: number): number {
  if (p < 0 || p >= e || b[p] !== 0x7b) return -1;
  p++;
  if (p < e && b[p] === 0x7d) return p + 1;
  for (;;) {
    if (p >= e || b[p] !== Q) return -1;
    const k = p + 1;
    p = skipString(b, k, e);
    if (p < 0) return -1;
    if (reservedKey(b, k, p - 1)) return -1;
    if (p >= e || b[p] !== 0x3a) return -1;
    p = skipValue(b, p + 1, e, 1);
    if (p < 0 || p >= e) return -1;
    const d = b[p++]!;
    if (d === 0x7d) return p;
    if (d !== 0x2c) return -1;
  }
}

/** Whether the key bytes `b[s, end)` are `load` or `judge`, or hold an escape. */
function reservedKey(b: Uint8Array, s: number, end: number): boolean {
  const n = end - s;
  if (n === 4 && b[s] === 0x6c && b[s + 1] === 0x6f && b[s + 2] === 0x61 && b[s + 3] === 0x64) return true;
  if (n === 5 && b[s] === 0x6a && b[s + 1] === 0x75 && b[s + 2] === 0x64 && b[s + 3] === 0x67 && b[s + 4] === 0x65) return true;
  for (let i = s; i < end; i++) if (b[i] === 0x5c) return true;
  return false;
}
