/**
 * Which (phase, pass, index) keys a results file has had so far, a bit a case: a million cases cost
 * 125 KB. joulebench never writes a key twice (`--resume` skips finished cases, the queue coordinator
 * drops a case it already has), so a repeat means files joined or edited, and every report figure
 * would count that case twice: the reader is told (src/report/inputs.ts).
 */
export class SeenKeys {
  /** One bit set per (rank, pass): rank 0 warmup, 1 scored. */
  private readonly passes = new Map<number, Uint8Array>();
  /** Indexes too large for a bit set (a hostile file), per (rank, pass). */
  private readonly sparse = new Map<number, Set<number>>();
  private lastKey = -1;
  private last: Uint8Array = new Uint8Array(0);
  /** Case lines whose key had been seen before. */
  repeats = 0;

  /** Records a case line's key; true when it had been seen already. */
  add(rank: number, pass: number, index: number): boolean {
    const key = pass * 2 + rank;
    if (!(index >= 0 && index < SPARSE_FROM)) return this.addSparse(key, index);
    let bits = key === this.lastKey ? this.last : this.passes.get(key);
    const byte = index >>> 3;
    if (bits === undefined || byte >= bits.length) {
      const grown = new Uint8Array(Math.max(64, (byte + 1) * 2));
      if (bits !== undefined) grown.set(bits);
      bits = grown;
      this.passes.set(key, bits);
    }
    this.lastKey = key;
    this.last = bits;
    const mask = 1 << (index & 7);
    if ((bits[byte]! & mask) !== 0) {
      this.repeats++;
      return true;
    }
    bits[byte] = bits[byte]! | mask;
    return false;
  }

  private addSparse(key: number, index: number): boolean {
    let set = this.sparse.get(key);
    if (set === undefined) this.sparse.set(key, (set = new Set()));
    if (set.has(index)) {
      this.repeats++;
      return true;
    }
    set.add(index);
    return false;
  }
}

/** Case indexes at or above this go to a Set: a bit set for them would be 2 MB or more. */
const SPARSE_FROM = 1 << 24;
