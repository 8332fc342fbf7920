/**
 * The line each (phase, pass, index) of a results file was first written on, 4 bytes a case. The arrays
 * are sized by indexes a hostile file chooses, so they stay within a budget that grows with the lines
 * read; past it, every key moves to a Map.
 */
export class CaseLines {
  /** Line numbers by index, a Uint32Array per pass, for warmup (0) and scored (1) lines; 0: not seen. */
  private readonly dense: [Map<number, Uint32Array>, Map<number, Uint32Array>] = [new Map(), new Map()];
  private denseBytes = 0;
  private lines = 0;
  /** Keys outside the arrays (an index out of their range, or every key once the budget was spent). */
  private sparse: Map<string, number> | null = null;
  private allSparse = false;

  /**
   * Records that key (rank 0 warmup, 1 scored; `turn` > 1: a later turn of a load run's conversation) is on `line`;
   * the line it was first on when it was seen before, else 0.
   */
  add(rank: 0 | 1, pass: number, index: number, line: number, turn = 1): number {
    this.lines++;
    if (turn > 1) return this.addSparse(rank, pass, `${index} ${turn}`, line);
    if (this.allSparse || !(index >= 0 && index < MAX_DENSE_INDEX)) return this.addSparse(rank, pass, index, line);
    const passes = this.dense[rank];
    let set = passes.get(pass);
    if (set === undefined || index >= set.length) {
      const slots = Math.max(64, (index + 1) * 2);
      const grow = (slots - (set?.length ?? 0)) * 4;
      if (this.denseBytes + grow > BASE_BUDGET_BYTES + this.lines * BUDGET_BYTES_PER_LINE) {
        this.toSparse();
        return this.addSparse(rank, pass, index, line);
      }
      const grown = new Uint32Array(slots);
      if (set !== undefined) grown.set(set);
      this.denseBytes += grow;
      passes.set(pass, (set = grown));
    }
    const first = set[index]!;
    if (first === 0) set[index] = line;
    return first;
  }

  private addSparse(rank: number, pass: number, index: number | string, line: number): number {
    const sparse = (this.sparse ??= new Map());
    const key = `${rank} ${pass} ${index}`;
    const first = sparse.get(key);
    if (first !== undefined) return first;
    sparse.set(key, line);
    return 0;
  }

  /** Every key in the arrays into the Map, for good. */
  private toSparse(): void {
    const sparse = (this.sparse ??= new Map());
    for (let rank = 0; rank < 2; rank++) {
      for (const [pass, set] of this.dense[rank]!) {
        for (let index = 0; index < set.length; index++) if (set[index] !== 0) sparse.set(`${rank} ${pass} ${index}`, set[index]!);
      }
      this.dense[rank]!.clear();
    }
    this.denseBytes = 0;
    this.allSparse = true;
  }
}

/** Indexes from here on go to the Map: one array for them would be 64 MB or more. */
const MAX_DENSE_INDEX = 1 << 24;
/** Array bytes allowed before any line: room for a 1M-case pass. */
const BASE_BUDGET_BYTES = 1 << 22;
/** And per line read: a real file's passes are dense, 4 bytes a line (and at most twice that while an array grows). */
const BUDGET_BYTES_PER_LINE = 32;
