/** A seeded generator for resampling (xoshiro128**, seeded by splitmix32 from FNV-1a): same seed, same intervals. Not for secrets. */

export interface Rng {
  /** The next 32-bit unsigned integer. */
  nextU32(): number;
  /** A uniform integer in [0, n), n ≤ 2^32 (bias ≤ n / 2^32, far below resampling noise). */
  below(n: number): number;
}

/** 32-bit FNV-1a of the UTF-16 code units of `s`. */
function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A generator seeded from a string (e.g. `${suiteDigest}/joules_per_correct`) or a 32-bit number. */
export function seededRng(seed: string | number): Rng {
  return new Xoshiro128(typeof seed === 'number' ? seed >>> 0 : fnv1a32(seed));
}

/** xoshiro128**; state kept as int32 so V8 holds it unboxed (a uint32 above 2^31 would be a heap number). */
class Xoshiro128 implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    // splitmix32 spreads one word into four non-zero state words.
    let x = seed | 0;
    const mix = (): number => {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) | 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = mix();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }
  /** The next output as a signed 32-bit integer (the same bits as {@link nextU32}). */
  private next32(): number {
    const b = this.b;
    const t = b << 9;
    let r = Math.imul(b, 5);
    r = Math.imul((r << 7) | (r >>> 25), 9);
    this.c ^= this.a;
    this.d ^= b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = (this.d << 11) | (this.d >>> 21);
    return r;
  }
  nextU32(): number {
    return this.next32() >>> 0;
  }
  below(n: number): number {
    return Math.floor(((this.next32() >>> 0) * n) / 4294967296);
  }
}
