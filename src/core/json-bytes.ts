/**
 * JSON values written straight into a byte buffer as UTF-8, the bytes `JSON.stringify` gives (why:
 * docs/benchmarks.md). Each writer returns the offset after what it wrote; the caller guarantees room
 * ({@link jsonStringBound}): a typed array silently drops writes past its end.
 */

/** A JSON string as UTF-8: printable ASCII copied a byte a character, the rest by {@link writeJsonStringRest}. */
export function writeJsonString(buf: Uint8Array, o: number, s: string): number {
  buf[o] = 0x22;
  let p = o + 1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // One unsigned compare for "outside 0x20–0x7e", then the two characters JSON escapes.
    if ((c - 0x20) >>> 0 > 0x5e || c === 0x22 || c === 0x5c) return writeJsonStringRest(buf, p, s, i);
    buf[p++] = c;
  }
  buf[p] = 0x22;
  return p + 1;
}

const HEX = '0123456789abcdef';

/**
 * The rest of a JSON string from character `i` (its opening quote and the characters before `i`
 * already written, `p` the next byte), and its closing quote, as `JSON.stringify` writes them:
 * `\"` and `\\`; `\b \t \n \f \r`; other controls as `\u00xx`; everything else (DEL included)
 * as UTF-8, a surrogate pair as its one code point, a lone surrogate as `\udxxx` (well-formed
 * JSON.stringify). Lowercase hex, as JSON.stringify has it.
 */
export function writeJsonStringRest(buf: Uint8Array, p: number, s: string, i: number): number {
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) {
      if (c === 0x22 || c === 0x5c) {
        buf[p++] = 0x5c;
      }
      buf[p++] = c;
    } else if (c < 0x20) {
      // \b \t \n \f \r have short forms; the other controls are \u00xx.
      const short = c === 0x08 ? 0x62 : c === 0x09 ? 0x74 : c === 0x0a ? 0x6e : c === 0x0c ? 0x66 : c === 0x0d ? 0x72 : 0;
      if (short === 0) p = writeUnicodeEscape(buf, p, c);
      else {
        buf[p++] = 0x5c;
        buf[p++] = short;
      }
    } else if (c < 0x800) {
      // DEL and the rest below 0x800: one or two bytes.
      if (c < 0x80) buf[p++] = c;
      else {
        buf[p++] = 0xc0 | (c >> 6);
        buf[p++] = 0x80 | (c & 0x3f);
      }
    } else if (c < 0xd800 || c > 0xdfff) {
      buf[p++] = 0xe0 | (c >> 12);
      buf[p++] = 0x80 | ((c >> 6) & 0x3f);
      buf[p++] = 0x80 | (c & 0x3f);
    } else {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        buf[p++] = 0xf0 | (cp >> 18);
        buf[p++] = 0x80 | ((cp >> 12) & 0x3f);
        buf[p++] = 0x80 | ((cp >> 6) & 0x3f);
        buf[p++] = 0x80 | (cp & 0x3f);
        i++;
      } else p = writeUnicodeEscape(buf, p, c);
    }
  }
  buf[p] = 0x22;
  return p + 1;
}

/** `\uxxxx` for code unit `c` (lowercase hex). */
function writeUnicodeEscape(buf: Uint8Array, p: number, c: number): number {
  buf[p] = 0x5c;
  buf[p + 1] = 0x75;
  buf[p + 2] = HEX.charCodeAt(c >> 12);
  buf[p + 3] = HEX.charCodeAt((c >> 8) & 0xf);
  buf[p + 4] = HEX.charCodeAt((c >> 4) & 0xf);
  buf[p + 5] = HEX.charCodeAt(c & 0xf);
  return p + 6;
}

/** Most bytes {@link writeJsonString} writes for a string of `length` UTF-16 units (`\uXXXX` each). */
export function jsonStringBound(length: number): number {
  return 6 * length + 2;
}

/** A JSON number (`null` for NaN and ±Infinity, as JSON.stringify writes them). */
export function writeJsonNumber(buf: Uint8Array, o: number, n: number): number {
  // NaN fails both comparisons, so the fast paths below only ever see finite numbers.
  if (n >= 0 && n < 1e9) {
    // Below 1e9 < 2^31, `| 0` truncates exactly: small integers and their digits stay in int32
    // arithmetic (a float division and floor per digit had been most of a number's cost).
    const whole = n | 0;
    if (whole === n) return writeUint31(buf, o, whole);
    // Micro-units (joules from µJ, ms to 3 places): integer arithmetic gives the shortest round-trip
    // decimal, which is what String(n) prints, without making a string. Below 1e9 a double's spacing
    // is under 1e-6, so no shorter decimal can name the same number.
    const micro = Math.round(n * 1e6);
    if (micro / 1e6 === n) {
      // micro < 1e15 < 2^53, so these are exact; n is not whole, so the fraction is 1..999999.
      const intPart = (micro / 1e6) | 0;
      let frac = (micro - intPart * 1e6) | 0;
      o = writeUint31(buf, o, intPart);
      buf[o++] = 0x2e; // .
      let places = 6;
      while (frac % 10 === 0) {
        frac = (frac / 10) | 0;
        places--;
      }
      for (let i = places - 1; i >= 0; i--) {
        const q = (frac / 10) | 0;
        buf[o + i] = 0x30 + frac - q * 10;
        frac = q;
      }
      return o + places;
    }
  }
  if (!Number.isFinite(n)) return writeNull(buf, o);
  return writeAscii(buf, o, String(n));
}

/** A non-negative int32 (below 2^31), its decimal digits with no string made. */
function writeUint31(buf: Uint8Array, o: number, n: number): number {
  if (n < 10) {
    buf[o] = 0x30 + n;
    return o + 1;
  }
  const digits = n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
  for (let i = digits - 1; i >= 0; i--) {
    const q = (n / 10) | 0;
    buf[o + i] = 0x30 + n - q * 10;
    n = q;
  }
  return o + digits;
}

export function writeNull(buf: Uint8Array, o: number): number {
  buf[o] = 0x6e;
  buf[o + 1] = 0x75;
  buf[o + 2] = 0x6c;
  buf[o + 3] = 0x6c;
  return o + 4;
}

/** A string of ASCII characters (JSON punctuation, a number's digits), a byte each. */
export function writeAscii(buf: Uint8Array, o: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[o + i] = s.charCodeAt(i);
  return o + s.length;
}

const encoder = new TextEncoder();

/** Any text (JSON made elsewhere), as UTF-8. */
export function writeText(buf: Uint8Array, o: number, s: string): number {
  return o + encoder.encodeInto(s, buf.subarray(o)).written;
}

/** Scratch for {@link constantStoresCode}'s eight-byte stores. */
const EIGHT = new DataView(new ArrayBuffer(8));

/** Code (for a generated writer) storing a constant ASCII text at `o` in `b` through the DataView `d`, eight bytes at a time. */
export function constantStoresCode(text: string): string {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7e) throw new RangeError(`constant text is not ASCII: ${text}`);
  }
  let code = '';
  let i = 0;
  // Eight bytes at a time as the double with those bytes (little-endian): one store instead of two.
  // Bytes of at most 0x7e never make a NaN (whose bits a store could change) nor an infinity; the
  // literal is the shortest decimal that reads back as the same double, checked byte for byte.
  for (; i + 8 <= text.length; i += 8) {
    for (let k = 0; k < 8; k++) EIGHT.setUint8(k, text.charCodeAt(i + k));
    const value = EIGHT.getFloat64(0, true);
    const literal = String(value);
    EIGHT.setFloat64(0, Number(literal), true);
    for (let k = 0; k < 8; k++) if (EIGHT.getUint8(k) !== text.charCodeAt(i + k)) throw new Error(`constant text does not round-trip as a double: ${text}`);
    code += `d.setFloat64(o+${i},${literal},true);`;
  }
  for (; i + 4 <= text.length; i += 4) {
    const word = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 8) | (text.charCodeAt(i + 2) << 16) | (text.charCodeAt(i + 3) << 24);
    code += `d.setUint32(o+${i},${word >>> 0},true);`;
  }
  for (; i < text.length; i++) code += `b[o+${i}]=${text.charCodeAt(i)};`;
  return `${code}o+=${text.length};`;
}

let lastBuffer: Uint8Array | null = null;
let lastView: DataView | null = null;

/** A DataView over the buffer: the last one is kept, since a writer fills one buffer for a long while. */
export function viewOf(b: Uint8Array): DataView {
  if (b !== lastBuffer || lastView === null) {
    lastView = new DataView(b.buffer, b.byteOffset, b.byteLength);
    lastBuffer = b;
  }
  return lastView;
}

/**
 * A writer for one constant ASCII text (a JSON key with its punctuation), generated once from
 * {@link constantStoresCode}; where code generation from strings is off, a plain copy loop.
 */
export function constantWriter(text: string): (buf: Uint8Array, o: number) => number {
  const code = constantStoresCode(text);
  if (!codeGenerationAllowed()) return (buf, o) => writeAscii(buf, o, text);
  return new Function('V', `"use strict";return function(b,o){const d=V(b);${code}return o;}`)(viewOf) as (buf: Uint8Array, o: number) => number;
}

let generationAllowed: boolean | undefined;

/**
 * Whether `new Function` works here: `node --disallow-code-generation-from-strings` (a hardening
 * flag) makes it throw, and the generated writers then fall back to plain loops.
 */
export function codeGenerationAllowed(): boolean {
  if (generationAllowed === undefined) {
    try {
      generationAllowed = new Function('return true')() === true;
    } catch {
      generationAllowed = false;
    }
  }
  return generationAllowed;
}
