import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { renderReportMarkdown } from '../../src/report/markdown.js';
import { renderReportTable } from '../../src/report/table.js';
import { caseLine } from '../../src/runner/case-line.js';
import { CTX, result } from '../helpers/results.js';

// Three streamed cases, a plain one, a failed one and a warmup pass. By hand (numpy gives the same):
// TPOT over [10, 20, 30]: mean 20, median 20, population std √(200/3) = 8.165, p99 = 20 + 0.98 × 10 = 29.8.
// ITL over the pooled gaps [5, 8.125, 12, 20, 40]: mean 85.125 / 5 = 17.025, median 12,
// std √(785.7625 / 5) = 12.536, p99 (rank 0.99 × 4 = 3.96) = 20 + 0.96 × 20 = 39.2.
const streamed = [
  result({ index: 0, ttft_ms: 3, tpot_ms: 10, itl_ms: [8.125, 12] }),
  result({ index: 1, ttft_ms: 4, tpot_ms: 20, itl_ms: [20, 40] }),
  result({ index: 2, ttft_ms: 5, tpot_ms: 30, itl_ms: [5] }),
  // A plain reply: no TTFT, so no TPOT and no gaps.
  result({ index: 3 }),
  // A failed case and a warmup pass count for neither (vLLM: successful requests only).
  result({ index: 4, passed: false, response: null, error: { code: 'E_TARGET', message: 'x' }, tpot_ms: 999, itl_ms: [999] }),
  result({ index: 0, phase: 'warmup', tpot_ms: 999, itl_ms: [999, 999] }),
];

describe('closed-loop report: TPOT and ITL as vLLM bench serve computes them', () => {
  it('mean, median, std and p99 over the answered cases, against hand-computed values', () => {
    const r = aggregate(streamed, CTX);
    assert.deepEqual(
      [r.mean_tpot_ms, r.median_tpot_ms, r.std_tpot_ms, r.p99_tpot_ms],
      [20, 20, 8.165, 29.8],
    );
    assert.deepEqual([r.mean_itl_ms, r.median_itl_ms, r.std_itl_ms, r.p99_itl_ms], [17.025, 12, 12.536, 39.2]);
  });

  it('the same figures from the case lines as written (the `report FILE` path)', () => {
    const reread = streamed.map((c) => JSON.parse(caseLine(c)) as typeof c);
    assert.deepEqual(reread[0]!.itl_ms, [8.125, 12]);
    assert.equal(JSON.stringify(aggregate(reread, CTX)), JSON.stringify(aggregate(streamed, CTX)));
  });

  it('the terminal and Markdown tables state them', () => {
    const r = aggregate(streamed, CTX);
    for (const text of [renderReportTable(r), renderReportMarkdown(r)]) {
      assert.match(text, /TPOT mean \/ median \/ p99\W+20 \/ 20 \/ 29\.8 ms/);
      assert.match(text, /ITL mean \/ median \/ p99\W+17\.025 \/ 12 \/ 39\.2 ms/);
    }
  });

  it('no case streamed: every field is null (never 0), and no line is printed', () => {
    const r = aggregate([result(), result({ index: 1, passed: false })], CTX);
    for (const k of ['mean', 'median', 'std', 'p99'] as const) {
      assert.equal(r[`${k}_tpot_ms`], null, `${k}_tpot_ms`);
      assert.equal(r[`${k}_itl_ms`], null, `${k}_itl_ms`);
    }
    for (const text of [renderReportTable(r), renderReportMarkdown(r)]) assert.doesNotMatch(text, /TPOT|ITL/);
  });

  it('a case that streamed one chunk has no gap, and TPOT without ITL stays TPOT alone', () => {
    const r = aggregate([result({ ttft_ms: 2, tpot_ms: 7, itl_ms: [] }), result({ index: 1, ttft_ms: 2, tpot_ms: 9 })], CTX);
    assert.deepEqual([r.mean_tpot_ms, r.median_tpot_ms, r.p99_tpot_ms], [8, 8, 8.98]);
    assert.deepEqual([r.mean_itl_ms, r.p99_itl_ms], [null, null]);
    assert.doesNotMatch(renderReportTable(r), /ITL/);
  });
});
