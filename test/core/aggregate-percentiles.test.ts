import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { nearestRank } from '../../src/core/stats.js';
import { CTX, result } from '../helpers/results.js';

// Whole-millisecond latencies are counted into order rather than sorted; the percentiles must be the
// nearest-rank ones of the values whatever their spread (narrow, wide, with a far outlier), as must
// the TTFT percentiles (fractional, always sorted), and the stage tallies kept in slots.
test('aggregate: latency and TTFT percentiles are exact nearest-rank, counted or sorted', () => {
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
  for (const [n, spread, outlier] of [[1, 5, 0], [2, 3, 0], [500, 4, 0], [500, 100_000, 0], [1000, 50, 7_200_000], [333, 2000, 0]] as const) {
    const rs = Array.from({ length: n }, (_, i) =>
      result({
        index: i,
        case_id: `c${i}`,
        latency_ms: i === 0 && outlier ? outlier + 0.4 : rand(spread) + rand(1000) / 1000,
        ttft_ms: rand(4) === 0 ? null : rand(spread * 1000) / 1000,
        stage: (['cache', 'kv', 'graph', 'neural', 'other'] as const)[rand(5)]!,
      }),
    );
    const r = aggregate(rs, { ...CTX, bootstrap: 0 });
    const lat = rs.map((x) => Math.floor(x.latency_ms));
    const ttft = rs.flatMap((x) => (x.ttft_ms === null ? [] : [x.ttft_ms]));
    assert.deepEqual([r.latency_p50_ms, r.latency_p95_ms, r.latency_p99_ms], [nearestRank(lat, 50), nearestRank(lat, 95), nearestRank(lat, 99)], `n=${n} spread=${spread}`);
    assert.deepEqual([r.ttft_p50_ms, r.ttft_p95_ms], [nearestRank(ttft, 50), nearestRank(ttft, 95)], `ttft n=${n}`);
    const stages: Record<string, number> = { cache: 0, kv: 0, graph: 0, neural: 0 };
    for (const x of rs) stages[x.stage!] = (stages[x.stage!] ?? 0) + 1;
    assert.deepEqual(r.stage_distribution, stages);
    assert.deepEqual(Object.keys(r.stage_distribution), Object.keys(stages), 'cascade stages first, then others');
  }
});
