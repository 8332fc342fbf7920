import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BenchReport } from '../../src/core/aggregate.js';
import type { CaseResult } from '../../src/core/types.js';
import { sweepComparison, type SweepArmRun } from '../../src/sweep/comparison.js';
import { renderSweepTable } from '../../src/report/sweep-table.js';

const N = 50;
const DIGEST = 'sha256:' + 'c'.repeat(64);

/** An arm whose case i costs `usd(i)` dollars (null: no price), 1 J and 100 ms, and is wrong when `miss(i)`. */
function arm(name: string, usd: (i: number) => number | null, miss: (i: number) => boolean): SweepArmRun {
  const results = Array.from({ length: N }, (_, i) => ({
    record: 'case', phase: 'scored', pass: 0, index: i, passed: !miss(i), weight: 1, joules: 1, cost_usd: usd(i), latency_ms: 100, error: null,
  })) as unknown as CaseResult[];
  const k = results.filter((r) => r.passed).length;
  const costs = results.map((r) => r.cost_usd);
  const total = costs.some((c) => c === null) ? null : costs.reduce((a: number, c) => a + c!, 0);
  const report = {
    accuracy_pct: (k * 100) / N,
    joules_per_correct: N / k,
    total_usd: total,
    usd_per_correct: total === null ? null : total / k,
    latency_p95_ms: 100,
    energy_source: 'rapl',
    energy_attribution: 'exclusive',
    below_floor_count: 0,
    suite: { digest: DIGEST },
  } as unknown as BenchReport;
  return { arm: name, suite: 's', report, results };
}

const price = (scale: number) => (i: number) => scale * 1e-4 * (1 + (i % 7));
const runs = [arm('base', price(1), () => false), arm('dear', price(2), (i) => i % 10 === 0), arm('unpriced', () => null, () => false)];
const sweep = { id: 'sw', name: 'sw', suites: ['s'], arms: ['base', 'dear', 'unpriced'], baseline: 'base' };

describe('sweep comparison in dollars', () => {
  it('each arm against the baseline: $/correct and total $ with paired intervals and verdicts, null for an arm without prices', () => {
    const c = sweepComparison(sweep, runs, { resamples: 300 });
    const vs = Object.fromEntries(c.suites[0]!.vs_baseline.map((v) => [v.arm, v]));
    const dear = vs.dear!;
    assert.equal(dear.total_usd_pct, 100);
    assert.equal(dear.usd_per_correct_pct, Math.round((((2 * 50) / 45 - 1) * 100) * 1e4) / 1e4);
    assert.ok(dear.usd_per_correct_ratio_ci95!.low > 1);
    assert.deepEqual([dear.usd_per_correct_verdict, dear.total_usd_verdict], ['worse', 'worse']);
    const unpriced = vs.unpriced!;
    assert.deepEqual([unpriced.usd_per_correct_pct, unpriced.total_usd_pct, unpriced.usd_per_correct_ratio_ci95], [null, null, null]);
    assert.deepEqual([unpriced.usd_per_correct_verdict, unpriced.total_usd_verdict], ['n/a', 'n/a']);
    // The $ frontier places the priced arms and says why the other is not placed.
    assert.deepEqual(c.suites[0]!.frontiers.cost.not_placed, [{ arm: 'unpriced', reason: 'no finite value for usd_per_correct' }]);

    const table = renderSweepTable(c);
    // The arm's last line is its row against the baseline.
    const vsLine = (a: string) => table.split('\n').filter((l) => l.trimStart().startsWith(`${a} `)).at(-1) ?? '';
    assert.match(table, /\$\/correct Δ +verdict +total \$ Δ +verdict/);
    assert.match(vsLine('dear'), /\+[\d.]+ % +worse +\+100\.00 % +worse$/);
    assert.match(vsLine('unpriced'), /n\/a +n\/a +n\/a +n\/a$/);
    assert.match(table, /J\/correct, \$ and p95 verdicts from 97\.5 % intervals/);
  });
});
