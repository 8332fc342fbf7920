import type { CaseResult } from '../core/types.js';
import { newScanTarget } from './case-scan.js';

/**
 * Puts a nearly ordered stream of case lines back into case order through a window of at most
 * `size` held cases (a min-heap on phase, pass, index, then file order): a concurrent run writes each
 * line as its case finishes, a few places from its place in case order. A case is handed out as soon
 * as it is the next in case order, else once more than `size` are held. Every line further than
 * `size` places from its place is detected (`push` returns false: a case would have to go before one
 * already handed out), and the caller then orders the file another way.
 *
 * The heap is kept in typed arrays (each held case's key, packed into one double, its file order and
 * its slot), so sifting reads a few contiguous kilobytes rather than one object per comparison (at
 * 1M lines 32 places late, the object heap's cache misses were most of the window's cost). A case is
 * held as it is when it is the window's {@link spare} (the scanner filled it in place) or an object of
 * its own (a parsed line); the scanner's reused object is copied into a pooled one.
 */
export class ReorderWindow {
  /** Heap position → the held case's packed key (-1: not packable), file order, slot. */
  private readonly hKey: Float64Array;
  private readonly hSeq: Float64Array;
  private readonly hSlot: Int32Array;
  private n = 0;
  /** Slot → the case, whether it is pooled (reused once handed out), and its key in full. */
  private readonly held: (CaseResult | null)[] = [];
  private readonly pooled: boolean[] = [];
  private readonly sRank: Float64Array;
  private readonly sPass: Float64Array;
  private readonly sIndex: Float64Array;
  private readonly freeSlots: number[] = [];
  private readonly freeCases: CaseResult[] = [];
  private spareCase: CaseResult | null = null;
  private seq = 0;
  private lastRank = -1;
  private lastPass = 0;
  private lastIndex = 0;
  /** The packed key of the case handed out last (-1: none yet, or not packable). */
  private lastKey = -1;

  constructor(
    private readonly size: number,
    private readonly emit: (r: CaseResult) => void,
  ) {
    const cap = size + 1;
    this.hKey = new Float64Array(cap);
    this.hSeq = new Float64Array(cap);
    this.hSlot = new Int32Array(cap);
    this.sRank = new Float64Array(cap);
    this.sPass = new Float64Array(cap);
    this.sIndex = new Float64Array(cap);
    for (let i = cap - 1; i >= 0; i--) this.freeSlots.push(i);
  }

  /**
   * A pooled case object to fill (with the scanner's `scanLine(…, into)`) and push: held without a
   * copy. The same object until it is pushed.
   */
  spare(): CaseResult {
    return (this.spareCase ??= this.freeCases.pop() ?? newScanTarget());
  }

  /**
   * Holds `r` (`copy`: the object is reused by its producer, so its fields are copied, its trace held
   * as it is: the scanner never changes a trace it handed out); hands out the smallest held case once
   * more than `size` are held. False when the order cannot be restored: the smallest case then goes
   * before one already handed out.
   */
  push(r: CaseResult, rank: number, copy: boolean): boolean {
    const slot = this.freeSlots.pop()!;
    let pooled = false;
    if (r === this.spareCase) {
      this.spareCase = null;
      pooled = true;
    } else if (copy) {
      r = copyInto(this.freeCases.pop() ?? newScanTarget(), r);
      pooled = true;
    }
    this.held[slot] = r;
    this.pooled[slot] = pooled;
    this.sRank[slot] = rank;
    this.sPass[slot] = r.pass;
    this.sIndex[slot] = r.index;
    this.up(packed(rank, r.pass, r.index), this.seq++, slot);
    if (this.n > this.size && !this.out()) return false;
    // The smallest held case is the next in case order (the successor of the last handed out, or that
    // key again, later in the file): no line still to come can go before it, so it goes now, and the
    // window holds only what is out of place (a few cases) rather than always `size`. A line that
    // would have to go before it after all (its key again, after the successor) makes `push` false,
    // as a line too late for a full window does; the caller orders the file another way.
    while (this.n > 0 && this.lastKey >= 0 && (this.hKey[0] === this.lastKey + 1 || this.hKey[0] === this.lastKey)) this.out();
    return true;
  }

  /** Hands out every held case in order (at the end of the file); false as for `push`. */
  drain(): boolean {
    while (this.n > 0) if (!this.out()) return false;
    return true;
  }

  private out(): boolean {
    const slot = this.hSlot[0]!;
    const key = this.hKey[0]!;
    const last = --this.n;
    if (last > 0) this.down(this.hKey[last]!, this.hSeq[last]!, this.hSlot[last]!);
    const rank = this.sRank[slot]!;
    const pass = this.sPass[slot]!;
    const index = this.sIndex[slot]!;
    if (rank < this.lastRank || (rank === this.lastRank && (pass < this.lastPass || (pass === this.lastPass && index < this.lastIndex)))) return false;
    this.lastRank = rank;
    this.lastPass = pass;
    this.lastIndex = index;
    this.lastKey = key;
    const r = this.held[slot]!;
    this.held[slot] = null;
    this.freeSlots.push(slot);
    this.emit(r);
    if (this.pooled[slot]) this.freeCases.push(r);
    return true;
  }

  /** Whether (key a, seq a, slot a) goes before (key b, …): by packed key, else rank, pass, index; then file order. */
  private before(ka: number, sa: number, slotA: number, kb: number, sb: number, slotB: number): boolean {
    if (ka >= 0 && kb >= 0) return ka !== kb ? ka < kb : sa < sb;
    const ra = this.sRank[slotA]!;
    const rb = this.sRank[slotB]!;
    if (ra !== rb) return ra < rb;
    const pa = this.sPass[slotA]!;
    const pb = this.sPass[slotB]!;
    if (pa !== pb) return pa < pb;
    const ia = this.sIndex[slotA]!;
    const ib = this.sIndex[slotB]!;
    return ia !== ib ? ia < ib : sa < sb;
  }

  private up(key: number, seq: number, slot: number): void {
    this.climb(this.n++, key, seq, slot);
  }

  /** Puts (key, seq, slot) in the hole at `i`, moving it up past every parent it goes before. */
  private climb(i: number, key: number, seq: number, slot: number): void {
    const { hKey, hSeq, hSlot } = this;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(key, seq, slot, hKey[parent]!, hSeq[parent]!, hSlot[parent]!)) break;
      hKey[i] = hKey[parent]!;
      hSeq[i] = hSeq[parent]!;
      hSlot[i] = hSlot[parent]!;
      i = parent;
    }
    hKey[i] = key;
    hSeq[i] = seq;
    hSlot[i] = slot;
  }

  /**
   * Puts (key, seq, slot) at the root and sifts it down (the heap has `n` entries), bottom-up (Floyd):
   * the hole walks to a leaf along the smaller child, one comparison a level, and the entry climbs back
   * from there. It came from the heap's end, so it is usually among the last to go and climbs little:
   * about half the comparisons of sifting it down from the top. The order is total (file order breaks
   * ties), so the cases come out in the same order either way.
   */
  private down(key: number, seq: number, slot: number): void {
    const { hKey, hSeq, hSlot } = this;
    const n = this.n;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && this.before(hKey[c + 1]!, hSeq[c + 1]!, hSlot[c + 1]!, hKey[c]!, hSeq[c]!, hSlot[c]!)) c++;
      hKey[i] = hKey[c]!;
      hSeq[i] = hSeq[c]!;
      hSlot[i] = hSlot[c]!;
      i = c;
    }
    this.climb(i, key, seq, slot);
  }
}

/** Phase rank, pass and index as one double, in the same order: exact while pass < 2^10 and index < 2^41 (whole, ≥ 0); else -1. */
function packed(rank: number, pass: number, index: number): number {
  return pass >= 0 && pass < 1024 && index >= 0 && index < 2 ** 41 && Number.isInteger(pass) && Number.isInteger(index) ? (rank * 1024 + pass) * 2 ** 41 + index : -1;
}

/** The fields the scanner fills (all the aggregate reads of a line the scanner read); the trace is shared. */
function copyInto(d: CaseResult, s: CaseResult): CaseResult {
  d.record = s.record;
  d.phase = s.phase;
  d.pass = s.pass;
  d.index = s.index;
  d.case_id = s.case_id;
  d.dataset = s.dataset;
  d.response = s.response;
  d.stage = s.stage;
  d.expected = s.expected;
  d.passed = s.passed;
  d.score = s.score;
  d.weight = s.weight;
  d.joules = s.joules;
  d.energy_source = s.energy_source;
  d.below_floor = s.below_floor;
  d.latency_ms = s.latency_ms;
  d.ttft_ms = s.ttft_ms;
  d.tpot_ms = s.tpot_ms;
  d.prompt_tokens = s.prompt_tokens;
  d.completion_tokens = s.completion_tokens;
  d.cost_usd = s.cost_usd;
  d.attempts = s.attempts;
  d.retry_overhead_ms = s.retry_overhead_ms;
  d.error = s.error;
  // A new object a line (the scanner never reuses one it handed out): held as it is.
  d.joules_range = s.joules_range;
  // The aggregate reads `trace` only when set: undefined stands for absent. The scanner never changes
  // a trace array it handed out (src/report/case-scan.ts), so it is held as it is, not copied.
  d.trace = s.trace;
  return d;
}

