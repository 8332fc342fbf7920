import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mcnemar, pairedComparison, type PairedCase } from '../../src/stats/index.js';

/** n cases; `pass(i)` decides correctness, `j(i)` the joules, `ms(i)` the latency. */
function side(n: number, pass: (i: number) => boolean | null, j: (i: number) => number | null, ms: (i: number) => number | null): PairedCase[] {
  return Array.from({ length: n }, (_, i) => ({ key: `0:${i}`, unit: i, passed: pass(i), weight: 1, joules: j(i), usd: null, latency_ms: ms(i) }));
}

describe('pairedComparison', () => {
  it('counts discordant pairs for McNemar and computes the point figures', () => {
    // Baseline right on 0..59, candidate right on 10..79 of 100: b = 10, c = 20.
    const base = side(100, (i) => i < 60, () => 2, (i) => 100 + i);
    const cand = side(100, (i) => i >= 10 && i < 80, () => 1, (i) => 50 + i);
    const r = pairedComparison(base, cand, { seed: 'sha256:x', resamples: 1000 });
    assert.equal(r.pairs, 100);
    assert.deepEqual(r.unpaired, { baseline: 0, candidate: 0 });
    assert.equal(r.accuracy_pp_delta.value, 10);
    assert.deepEqual(r.accuracy_pp_delta.mcnemar, mcnemar(10, 20));
    assert.equal(r.accuracy_pp_delta.significant, mcnemar(10, 20).p_value < 0.05);
    // J/correct: cand 100/70, base 200/60.
    assert.equal(r.joules_per_correct_ratio.value, Math.round((100 / 70 / (200 / 60)) * 1e6) / 1e6);
    assert.equal(r.joules_per_correct_ratio.significant, true);
    assert.ok(r.joules_per_correct_ratio.ci95!.high < 1);
    assert.equal(r.joules_per_correct_ratio.ci95!.method, 'paired-bootstrap');
    // p95: nearest rank 95 of 100 → the 95th value: 194 vs 144.
    assert.equal(r.latency_p95_ms_delta.value, -50);
    assert.equal(r.latency_p95_ms_delta.significant, true);
  });

  it('finds no detectable change between identical runs', () => {
    const mk = () => side(50, (i) => i % 3 !== 0, (i) => 1 + (i % 5), (i) => 10 + ((i * 37) % 90));
    const r = pairedComparison(mk(), mk(), { seed: 'sha256:y', resamples: 500 });
    assert.equal(r.accuracy_pp_delta.value, 0);
    assert.equal(r.accuracy_pp_delta.mcnemar!.p_value, 1);
    assert.equal(r.accuracy_pp_delta.significant, false);
    assert.deepEqual([r.joules_per_correct_ratio.ci95!.low, r.joules_per_correct_ratio.ci95!.high], [1, 1]);
    assert.equal(r.joules_per_correct_ratio.significant, false);
    assert.equal(r.latency_p95_ms_delta.significant, false);
  });

  it('a small difference on few cases is not significant; the same difference on many is', () => {
    // 3 J vs 3.3 J per case, with noise between cases that the pairing cancels only partly.
    const noisy = (n: number, scale: number, salt: number) => side(n, (i) => i % 4 !== 0, (i) => scale * (1 + (((i + salt) * 7919) % 13) / 4), () => 10);
    const few = pairedComparison(noisy(8, 3, 0), noisy(8, 3.3, 5), { seed: 'a', resamples: 1000 });
    assert.equal(few.joules_per_correct_ratio.significant, false);
    const many = pairedComparison(noisy(2000, 3, 0), noisy(2000, 3.3, 5), { seed: 'a', resamples: 500 });
    assert.equal(many.joules_per_correct_ratio.significant, true);
  });

  it('alpha changes the judging interval, not the 95 % one', () => {
    const base = side(60, (i) => i % 2 === 0, (i) => 1 + (i % 7), () => 10);
    const cand = side(60, (i) => i % 2 === 0, (i) => 1.15 * (1 + (i % 7)) + (i % 3) * 0.5, () => 10);
    const a = pairedComparison(base, cand, { seed: 's', resamples: 800, alpha: 0.05 });
    const b = pairedComparison(base, cand, { seed: 's', resamples: 800, alpha: 0.2 });
    assert.deepEqual(a.joules_per_correct_ratio.ci95, b.joules_per_correct_ratio.ci95);
    assert.equal(b.joules_per_correct_ratio.ci_alpha!.level, 0.8);
    assert.ok(b.joules_per_correct_ratio.ci_alpha!.high - b.joules_per_correct_ratio.ci_alpha!.low < a.joules_per_correct_ratio.ci95!.high - a.joules_per_correct_ratio.ci95!.low);
  });

  it('withholds what it cannot judge, with the reason', () => {
    const base = side(10, () => true, () => null, () => 5);
    const cand = side(10, () => true, () => 1, () => 5);
    const r = pairedComparison(base, cand, { seed: 's', resamples: 100 });
    assert.equal(r.joules_per_correct_ratio.value, null);
    assert.equal(r.joules_per_correct_ratio.significant, null);
    assert.equal(r.joules_per_correct_ratio.reason, 'energy unknown for some paired cases');
    const other = pairedComparison(cand, cand, { seed: 's', resamples: 100, energyComparable: false });
    assert.equal(other.joules_per_correct_ratio.reason, 'energy measured by different sources: not comparable');
    const one = pairedComparison(side(1, () => true, () => 1, () => 5), side(1, () => false, () => 1, () => 5), { seed: 's' });
    assert.match(one.accuracy_pp_delta.reason!, /fewer than 2 cases scored in both runs/);
    // Results with no partner are counted, not compared.
    const part = pairedComparison(side(10, () => true, () => 1, () => 5), side(6, () => true, () => 1, () => 5), { seed: 's', resamples: 100 });
    assert.deepEqual(part.unpaired, { baseline: 4, candidate: 0 });
  });

  it('$/correct is bootstrapped as J/correct is; total $ as the ratio of the paired totals', () => {
    // Dollars equal to the joules: the $/correct ratio is the J/correct ratio, interval and verdict included.
    const mk = (n: number, acc: number, scale: number, salt: number) =>
      side(n, (i) => (i * 7 + salt) % 10 < acc, (i) => scale * (1 + ((i * 31 + salt) % 9)), () => 10).map((c) => ({ ...c, usd: c.joules }));
    const base = mk(60, 8, 1, 0);
    const cand = mk(60, 6, 1.4, 3);
    const r = pairedComparison(base, cand, { seed: 'sha256:usd', resamples: 600 });
    const { reason: _r, ...usd } = r.usd_per_correct_ratio;
    assert.deepEqual(usd, r.joules_per_correct_ratio);
    assert.equal(r.usd_per_correct_ratio.significant, true);
    const sum = (xs: { usd: number | null }[]) => xs.reduce((a, x) => a + x.usd!, 0);
    assert.equal(r.total_usd_ratio.value, Math.round((sum(cand) / sum(base)) * 1e6) / 1e6);
    assert.ok(r.total_usd_ratio.ci95!.low > 1 && r.total_usd_ratio.significant === true);
    // One case with no cost: both $ figures withheld, with the reason; joules unaffected.
    const partial = pairedComparison(base, cand.map((c, i) => (i === 4 ? { ...c, usd: null } : c)), { seed: 'sha256:usd', resamples: 100 });
    assert.equal(partial.usd_per_correct_ratio.value, null);
    assert.equal(partial.usd_per_correct_ratio.significant, null);
    assert.equal(partial.usd_per_correct_ratio.reason, 'cost unknown for some paired cases');
    assert.equal(partial.total_usd_ratio.reason, 'cost unknown for some paired cases');
    assert.notEqual(partial.joules_per_correct_ratio.value, null);
  });
});
