/**
 * Which (phase, pass, index) keys a results file has had so far, a bit a case: a million cases cost
 * 125 KB. joulebench never writes a key twice (`--resume` skips finished cases, the queue coordinator
 * drops a case it already has), so a repeat means files joined or edited, and every report figure
 * would count that case twice: the reader is told (src/report/inputs.ts).
 *
 * The bit sets are sized by the largest index of each pass, which a hostile file chooses: a line
 * with index 16,777,215 in a new pass each line would ask megabytes a line. So their bytes are held
 * within a budget that grows with the lines read (a real run's file stays far inside it); past it,
 * every key seen so far moves to a Set and the rest follow, memory then growing by an entry a line.
 */
export class SeenKeys {
  /** A bit set per pass, for warmup (0) and scored (1) lines. */
  private readonly bits: [Map<number, Uint8Array>, Map<number, Uint8Array>] = [new Map(), new Map()];
  private bitBytes = 0;
  private lines = 0;
  /** Keys outside the bit sets (an index out of their range, or every key once the budget was spent). */
  private sparse: Set<string> | null = null;
  private allSparse = false;
  /** Case lines whose key had been seen before. */
  repeats = 0;

  /** Records a case line's key (rank 0 warmup, 1 scored); true when it had been seen already. */
  add(rank: 0 | 1, pass: number, index: number): boolean {
    this.lines++;
    if (this.allSparse || !(index >= 0 && index < MAX_BIT_INDEX)) return this.addSparse(rank, pass, index);
    const passes = this.bits[rank];
    let set = passes.get(pass);
    const byte = index >>> 3;
    if (set === undefined || byte >= set.length) {
      const bytes = Math.max(64, (byte + 1) * 2);
      const grow = bytes - (set?.length ?? 0);
      if (this.bitBytes + grow > BASE_BUDGET_BYTES + this.lines * BUDGET_BYTES_PER_LINE) {
        this.toSparse();
        return this.addSparse(rank, pass, index);
      }
      const grown = new Uint8Array(bytes);
      if (set !== undefined) grown.set(set);
      this.bitBytes += grow;
      passes.set(pass, (set = grown));
    }
    const mask = 1 << (index & 7);
    if ((set[byte]! & mask) !== 0) {
      this.repeats++;
      return true;
    }
    set[byte] = set[byte]! | mask;
    return false;
  }

  private addSparse(rank: number, pass: number, index: number): boolean {
    const sparse = (this.sparse ??= new Set());
    const key = `${rank} ${pass} ${index}`;
    if (sparse.has(key)) {
      this.repeats++;
      return true;
    }
    sparse.add(key);
    return false;
  }

  /** Every key in the bit sets into the Set, for good. */
  private toSparse(): void {
    const sparse = (this.sparse ??= new Set());
    for (let rank = 0; rank < 2; rank++) {
      for (const [pass, set] of this.bits[rank]!) {
        for (let byte = 0; byte < set.length; byte++) {
          const b = set[byte]!;
          if (b === 0) continue;
          for (let bit = 0; bit < 8; bit++) if ((b & (1 << bit)) !== 0) sparse.add(`${rank} ${pass} ${byte * 8 + bit}`);
        }
      }
      this.bits[rank]!.clear();
    }
    this.bitBytes = 0;
    this.allSparse = true;
  }
}

/** Indexes from here on go to the Set: one bit set for them would be 2 MB or more. */
const MAX_BIT_INDEX = 1 << 24;
/** Bit-set bytes allowed before any line: room for a 4M-case pass. */
const BASE_BUDGET_BYTES = 1 << 20;
/** And per line read: a real file's passes are dense, an eighth of a byte a line (and at most twice that while a set grows). */
const BUDGET_BYTES_PER_LINE = 4;
