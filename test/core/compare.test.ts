import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compare } from '../../src/core/compare.js';

const side = (joules_per_correct: number | null, latency_p95_ms: number | null, accuracy_pct: number | null) => ({
  joules_per_correct,
  latency_p95_ms,
  accuracy_pct,
});

describe('compare', () => {
  it('gives % change for J/correct and p95, and a point difference for accuracy', () => {
    const c = compare(side(20, 100, 80), side(15, 120, 82.5));
    assert.equal(c.joules_per_correct_pct, -25);
    assert.equal(c.latency_p95_pct, 20);
    assert.equal(c.accuracy_pp_delta, 2.5);
    assert.deepEqual(Object.keys(c), ['baseline', 'candidate', 'joules_per_correct_pct', 'latency_p95_pct', 'accuracy_pp_delta', 'usd_per_correct_pct', 'total_usd_pct', 'energy_sources_match']);
    assert.equal(c.energy_sources_match, null, 'sides without labels say nothing');
  });
  it('gives % change for $/correct and total $; null when a report has no $ figure', () => {
    const c = compare({ ...side(20, 100, 80), usd_per_correct: 0.004, total_usd: 0.2 }, { ...side(15, 120, 82.5), usd_per_correct: 0.005, total_usd: 0.15 });
    assert.deepEqual([c.usd_per_correct_pct, c.total_usd_pct], [25, -25]);
    assert.deepEqual([c.baseline.usd_per_correct, c.candidate.total_usd], [0.004, 0.15]);
    const old = compare(side(20, 100, 80), { ...side(15, 120, 82.5), usd_per_correct: 0.005, total_usd: 0.15 });
    assert.deepEqual([old.usd_per_correct_pct, old.total_usd_pct], [null, null]);
  });
  it('is null where the baseline is zero', () => {
    const c = compare(side(0, 0, 0), side(5, 5, 5));
    assert.equal(c.joules_per_correct_pct, null);
    assert.equal(c.latency_p95_pct, null);
    assert.equal(c.accuracy_pp_delta, 5);
  });
  it('is null where either side is null', () => {
    const c = compare(side(null, null, null), side(5, 5, 5));
    assert.equal(c.joules_per_correct_pct, null);
    assert.equal(c.latency_p95_pct, null);
    assert.equal(c.accuracy_pp_delta, null);
    assert.equal(compare(side(5, 5, 5), side(null, null, null)).joules_per_correct_pct, null);
  });
  it('gives no J/correct change between different energy sources', () => {
    const c = compare({ ...side(20, 100, 80), energy_source: 'model' }, { ...side(0.01, 100, 80), energy_source: 'estimate' });
    assert.equal(c.joules_per_correct_pct, null, 'a model against an estimate is not a −99.9 % change');
    assert.equal(c.energy_sources_match, false);
    assert.equal(c.latency_p95_pct, 0);
    const same = compare({ ...side(20, 100, 80), energy_source: 'rapl' }, { ...side(10, 100, 80), energy_source: 'rapl' });
    assert.equal(same.joules_per_correct_pct, -50);
    const mixed = (parts: Record<string, number>) => ({ ...side(1, 1, 1), energy_source: 'mixed', energy_sources: parts });
    assert.equal(compare(mixed({ model: 3, rapl: 1 }), mixed({ model: 1, rapl: 5 })).energy_sources_match, true);
    assert.equal(compare(mixed({ model: 3, rapl: 1 }), mixed({ model: 1, nvml: 5 })).energy_sources_match, false);
  });

  it('copies only the three fields from each side', () => {
    const base = { ...side(1, 2, 3), extra: 'x' };
    assert.deepEqual(compare(base, base).baseline, side(1, 2, 3));
  });
});
