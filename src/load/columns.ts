import { NumberColumn } from '../core/number-column.js';
import type { LoadRecord } from './metrics.js';

const FROM: readonly LoadRecord['output_tokens_from'][] = ['none', 'usage', 'chunks'];
const FROM_CODE = { none: 0, usage: 1, chunks: 2 } as const;

type Sliceable = ArrayLike<number> & Iterable<number> & { subarray(begin: number, end: number): ArrayLike<number> & Iterable<number> };

/**
 * A load run's per-request records as typed columns, so memory does not grow by an object a request; `null`
 * is stored as NaN. Rows are added in any order and read back in request order (stable), so sums are the
 * same to the last bit whichever request finished first.
 */
export class LoadColumns {
  private readonly request = new NumberColumn({ index: true });
  private readonly ok = new NumberColumn();
  /** 1 passed, 0 failed, NaN unscored. */
  private readonly passed = new NumberColumn();
  private readonly planned = new NumberColumn();
  private readonly sent = new NumberColumn();
  private readonly queue = new NumberColumn();
  private readonly lag = new NumberColumn();
  private readonly ttft = new NumberColumn();
  private readonly e2e = new NumberColumn();
  private readonly outTokens = new NumberColumn();
  private readonly from = new NumberColumn();
  private readonly promptTokens = new NumberColumn();
  private readonly tokenizerTokens = new NumberColumn();
  private readonly timesAt = new NumberColumn();
  private readonly timesCount = new NumberColumn();
  private readonly times = new NumberColumn();
  private order: Float64Array | null = null;

  /** The records as columns (request j is the j-th record), or the columns themselves. */
  static from(input: LoadColumns | readonly LoadRecord[]): LoadColumns {
    if (input instanceof LoadColumns) return input;
    const cols = new LoadColumns();
    for (let j = 0; j < input.length; j++) cols.add(input[j]!, j);
    return cols;
  }

  get length(): number {
    return this.request.length;
  }

  /** Adds request `request`'s record; nothing of `r` is kept (its chunk times are copied). */
  add(r: LoadRecord, request: number): void {
    this.request.push(request);
    this.ok.push(r.ok ? 1 : 0);
    this.passed.push(r.passed === null ? NaN : r.passed ? 1 : 0);
    this.planned.push(r.planned_at_ms);
    this.sent.push(r.sent_at_ms);
    this.queue.push(r.queue_ms);
    this.lag.push(r.lag_ms);
    this.ttft.push(r.ttft_ms ?? NaN);
    this.e2e.push(r.e2e_ms);
    this.outTokens.push(r.output_tokens ?? NaN);
    this.from.push(FROM_CODE[r.output_tokens_from]);
    this.promptTokens.push(r.prompt_tokens ?? NaN);
    this.tokenizerTokens.push(r.tokenizer_tokens ?? NaN);
    this.timesAt.push(this.times.length);
    const t = r.token_times_ms;
    this.timesCount.push(t.length);
    for (let i = 0; i < t.length; i++) this.times.push(t[i]!);
  }

  /** Every row as a record, in request order; its `token_times_ms` views the shared column: keep neither past the loop turn. */
  *records(): IterableIterator<LoadRecord> {
    const times = this.times.view() as Sliceable;
    for (const j of this.requestOrder()) {
      const at = this.timesAt.at(j);
      yield {
        ok: this.ok.at(j) === 1,
        passed: orNull(this.passed.at(j)) === null ? null : this.passed.at(j) === 1,
        planned_at_ms: this.planned.at(j),
        sent_at_ms: this.sent.at(j),
        queue_ms: this.queue.at(j),
        lag_ms: this.lag.at(j),
        ttft_ms: orNull(this.ttft.at(j)),
        e2e_ms: this.e2e.at(j),
        token_times_ms: times.subarray(at, at + this.timesCount.at(j)),
        output_tokens: orNull(this.outTokens.at(j)),
        output_tokens_from: FROM[this.from.at(j)]!,
        prompt_tokens: orNull(this.promptTokens.at(j)),
        ...(this.tokenizerTokens.at(j) === this.tokenizerTokens.at(j) ? { tokenizer_tokens: this.tokenizerTokens.at(j) } : {}),
      };
    }
  }

  /** Bytes the columns hold (their typed arrays' capacity), for the bench and tests. */
  get byteLength(): number {
    const cols = [this.request, this.ok, this.passed, this.planned, this.sent, this.queue, this.lag, this.ttft, this.e2e, this.outTokens, this.from, this.promptTokens, this.tokenizerTokens, this.timesAt, this.timesCount, this.times];
    return cols.reduce((s, c) => s + c.byteLength, 0);
  }

  /** Row numbers sorted by request number, ties in the order added (a stable sort); kept until the next add. */
  private requestOrder(): Float64Array {
    const n = this.length;
    if (this.order !== null && this.order.length === n) return this.order;
    const rows = new Float64Array(n);
    let sorted = true;
    let small = true;
    for (let j = 0; j < n; j++) {
      const q = this.request.at(j);
      if (j > 0 && q < this.request.at(j - 1)) sorted = false;
      if (!(q >= 0 && q < 4 * n + 1024 && q === Math.floor(q))) small = false;
    }
    if (sorted) {
      for (let j = 0; j < n; j++) rows[j] = j;
    } else if (small) {
      // Request numbers are small whole numbers (a run's own are 0…N−1): a counting sort, stable.
      const start = new Float64Array(4 * n + 1025);
      for (let j = 0; j < n; j++) start[this.request.at(j) + 1]!++;
      for (let q = 1; q < start.length; q++) start[q]! += start[q - 1]!;
      for (let j = 0; j < n; j++) rows[start[this.request.at(j)]!++] = j;
    } else {
      for (let j = 0; j < n; j++) rows[j] = j;
      rows.sort((a, b) => this.request.at(a) - this.request.at(b) || a - b);
    }
    this.order = rows;
    return rows;
  }
}

function orNull(v: number): number | null {
  return v !== v ? null : v;
}
