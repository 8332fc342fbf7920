import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildLoadBlock } from '../../src/load/block.js';
import { LoadColumns } from '../../src/load/columns.js';
import { schedulingLag, servingMetrics, type LoadRecord } from '../../src/load/metrics.js';
import { tokensBetween } from '../../src/load/steady.js';
import { rec } from './record-fixture.js';

/** A record as plain values (its chunk times an array), to compare what the columns give back. */
const plain = (r: LoadRecord) => ({ ...r, token_times_ms: [...r.token_times_ms] });

describe('LoadColumns: a load run\'s per-request records as typed columns', () => {
  it('gives every record back exactly, nulls included, in request order whatever order they were added in', () => {
    const records = [
      rec({ ok: false, passed: null, ttft_ms: null, output_tokens: null, output_tokens_from: 'none', prompt_tokens: null, token_times_ms: [] }),
      rec({ passed: false, planned_at_ms: 1.125, sent_at_ms: 1.5, queue_ms: 0.25, lag_ms: 0.125, ttft_ms: 3.3, e2e_ms: 9.7, token_times_ms: [3.3, 4.1, 9.2], output_tokens: 3, output_tokens_from: 'chunks' }),
      rec({ sent_at_ms: 2.75, token_times_ms: [0.001, 123456.789], output_tokens: 7, prompt_tokens: 0 }),
      rec({ sent_at_ms: 3, token_times_ms: [5] }),
    ];
    const cols = new LoadColumns();
    for (const j of [2, 0, 3, 1]) cols.add(records[j]!, j);
    assert.equal(cols.length, 4);
    assert.deepEqual([...cols.records()].map(plain), records.map(plain));
    // Two rows of one request (a file with a line repeated) keep the order they were added in.
    const twice = new LoadColumns();
    twice.add(records[1]!, 5);
    twice.add(records[2]!, 1);
    twice.add(records[3]!, 5);
    assert.deepEqual([...twice.records()].map((r) => r.sent_at_ms), [2.75, 1.5, 3]);
    // Request numbers far above the row count (a hand-made file) take the general sort: the same order.
    const far = new LoadColumns();
    far.add(records[1]!, 5e9);
    far.add(records[2]!, 1e9);
    far.add(records[3]!, 5e9);
    assert.deepEqual([...far.records()].map((r) => r.sent_at_ms), [2.75, 1.5, 3]);
    // The order is kept between reads and made again once a row is added.
    far.add(records[0]!, 0);
    assert.deepEqual([...far.records()].map((r) => r.sent_at_ms), [0, 2.75, 1.5, 3]);
  });

  it('sums in request order: rows added as requests finish give the bits of the records in order', () => {
    // Tokens spread over chunks (each chunk 1/10, 3/7, … of a token): floating-point sums that depend on order.
    const shape: [number, number][] = [[1, 10], [3, 7], [2, 3], [5, 9], [7, 11], [1, 3]];
    const records = shape.map(([tokens, chunks], i) => rec({ sent_at_ms: i, output_tokens: tokens, token_times_ms: Array.from({ length: chunks }, (_, k) => k + 0.5) }));
    const finished = [3, 0, 5, 1, 4, 2];
    const sum = (order: number[]) => {
      let s = 0;
      for (const j of order) for (let k = 0; k < shape[j]![1]; k++) s += shape[j]![0] / shape[j]![1];
      return s;
    };
    const inOrder = sum([0, 1, 2, 3, 4, 5]);
    assert.notEqual(sum(finished), inOrder, 'precondition: these rows sum differently in the order they finished');
    const cols = new LoadColumns();
    for (const j of finished) cols.add(records[j]!, j);
    assert.equal(tokensBetween(cols, -Infinity, Infinity), inOrder);
    assert.equal(tokensBetween(records, -Infinity, Infinity), inOrder);
    // And every other figure of the block is the same as from the records themselves.
    assert.deepEqual(servingMetrics(cols, [50, 99], { ttft_ms: 20 }), servingMetrics(records, [50, 99], { ttft_ms: 20 }));
    assert.deepEqual(schedulingLag(cols), schedulingLag(records));
    const o = { request_rate: 10, burstiness: 1, seed: 0, max_concurrency: 2, num_requests: 6, percentiles: [99], slo: null, ttft_token: 'content' as const };
    const m = { first_token_at_ms: [1, 2, 3, 4, 5, 6], steady: null, measured_window: null, run: { joules: 3, source: 'rapl' as const, window_ms: 20, below_floor: false }, run_end_ms: 20, idle: { status: 'skipped' as const, watts: null }, floor_ms: 1 };
    assert.deepEqual(buildLoadBlock(o, cols, m), buildLoadBlock(o, records, m));
  });

  it('costs well under 128 bytes a request (not an object a request), 8 bytes a chunk', () => {
    const cols = new LoadColumns();
    const n = 10_000;
    for (let i = 0; i < n; i++) {
      cols.add(rec({ planned_at_ms: i * 1.5, sent_at_ms: i * 1.5 + 0.125, lag_ms: (i % 7) * 0.001, ttft_ms: 20 + (i % 13) * 0.01, e2e_ms: 50 + (i % 17) * 0.01, token_times_ms: [20 + (i % 13) * 0.01] }), i);
    }
    const perRequest = cols.byteLength / n;
    assert.ok(perRequest < 128, `${perRequest.toFixed(1)} bytes a request`);
    // Figures every request shares (ok, passed, token counts, queue) are stored as nothing.
    assert.ok(perRequest > 8 * 6, `${perRequest.toFixed(1)} bytes a request: the six varying figures need 8 bytes each`);
  });
});
