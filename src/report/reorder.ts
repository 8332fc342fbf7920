import type { CaseResult } from '../core/types.js';

/** A case line's place in case order: phase rank (warmup 0, scored 1), pass, index; then file order. */
interface Held {
  /** rank, pass and index packed into one exact double when they fit (see `packed`); else -1. */
  key: number;
  rank: number;
  pass: number;
  index: number;
  seq: number;
  r: CaseResult;
  /** True when `r` is a copy this window made (reused once handed out and added). */
  pooled: boolean;
}

/**
 * Puts a nearly ordered stream of case lines back into case order through a window of at most
 * `size` held cases (a min-heap on phase, pass, index, then file order): a concurrent run writes each
 * line as its case finishes, a few places from its place in case order. Every line further than
 * `size` places from its place is detected (`push` returns false: a case would have to go before one
 * already handed out), and the caller then orders the file another way.
 *
 * The scanner's reused result is copied into pooled objects (the fields the aggregate reads), so a
 * held case costs one object, reused once it is handed out.
 */
export class ReorderWindow {
  private readonly heap: Held[] = [];
  private readonly free: Held[] = [];
  private seq = 0;
  private lastRank = -1;
  private lastPass = 0;
  private lastIndex = 0;

  constructor(
    private readonly size: number,
    private readonly emit: (r: CaseResult) => void,
  ) {}

  /**
   * Holds `r` (`copy`: the object is reused by its producer, so its fields are copied); hands out the
   * smallest held case once more than `size` are held. False when the order cannot be restored: the
   * smallest case then goes before one already handed out.
   */
  push(r: CaseResult, rank: number, copy: boolean): boolean {
    const h = this.free.pop() ?? { key: 0, rank: 0, pass: 0, index: 0, seq: 0, r: null as unknown as CaseResult, pooled: false };
    h.rank = rank;
    h.pass = r.pass;
    h.index = r.index;
    h.seq = this.seq++;
    h.key = packed(rank, r.pass, r.index);
    if (copy) {
      h.r = copyInto(h.pooled ? h.r : ({} as CaseResult), r);
      h.pooled = true;
    } else {
      h.r = r;
      h.pooled = false;
    }
    this.up(h);
    return this.heap.length > this.size ? this.out() : true;
  }

  /** Hands out every held case in order (at the end of the file); false as for `push`. */
  drain(): boolean {
    while (this.heap.length > 0) if (!this.out()) return false;
    return true;
  }

  private out(): boolean {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      this.down();
    }
    if (top.rank < this.lastRank || (top.rank === this.lastRank && (top.pass < this.lastPass || (top.pass === this.lastPass && top.index < this.lastIndex)))) return false;
    this.lastRank = top.rank;
    this.lastPass = top.pass;
    this.lastIndex = top.index;
    this.emit(top.r);
    if (top.pooled) this.free.push(top);
    return true;
  }

  private up(h: Held): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(h);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = h;
  }

  private down(): void {
    const heap = this.heap;
    const n = heap.length;
    const h = heap[0]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(heap[c + 1]!, heap[c]!)) c++;
      if (!before(heap[c]!, h)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = h;
  }
}

/** Phase rank, pass and index as one double, in the same order: exact while pass < 2^10 and index < 2^41 (whole, ≥ 0); else -1. */
function packed(rank: number, pass: number, index: number): number {
  return pass >= 0 && pass < 1024 && index >= 0 && index < 2 ** 41 && Number.isInteger(pass) && Number.isInteger(index) ? (rank * 1024 + pass) * 2 ** 41 + index : -1;
}

function before(a: Held, b: Held): boolean {
  if (a.key >= 0 && b.key >= 0) return a.key !== b.key ? a.key < b.key : a.seq < b.seq;
  return a.rank !== b.rank ? a.rank < b.rank : a.pass !== b.pass ? a.pass < b.pass : a.index !== b.index ? a.index < b.index : a.seq < b.seq;
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
  // The aggregate reads `trace` only when set: undefined stands for absent. The scanner never changes
  // a trace array it handed out (src/report/case-scan.ts), so it is held as it is, not copied.
  d.trace = s.trace;
  return d;
}

