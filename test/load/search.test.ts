import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextRate, SEARCH_MAX_STEPS, stoppingRule, type RateSearchRule } from '../../src/load/search.js';

/** Runs the search against a server that meets the target at every rate up to `capacity`. */
function search(capacity: number, rule: RateSearchRule): { rates: number[]; result: ReturnType<typeof nextRate> } {
  const steps: { request_rate: number; passed: boolean }[] = [];
  for (;;) {
    const next = nextRate(steps, rule);
    if ('done' in next) return { rates: steps.map((s) => s.request_rate), result: next };
    steps.push({ request_rate: next.rate, passed: next.rate <= capacity });
  }
}

describe('the highest rate that meets the SLO: doubling, then bisection', () => {
  it('doubles until a rate fails, then bisects until the failing rate is within 5 % of the passing one', () => {
    const { rates, result } = search(50, { start_rate: 10, goodput_target: 0.9, max_request_rate: null });
    assert.deepEqual(rates.slice(0, 4), [10, 20, 40, 80]);
    assert.deepEqual(rates.slice(4, 6), [60, 50]);
    assert.ok('done' in result);
    assert.equal(result.max_request_rate, 50); // 50 passes, 52.5 fails: within 5 %
    assert.equal(rates.at(-1), 52.5);
  });

  it('halves from a failing start; stops at the cap when the cap passes; gives none when nothing passes', () => {
    assert.deepEqual(search(3, { start_rate: 16, goodput_target: 0.9, max_request_rate: null }).rates.slice(0, 4), [16, 8, 4, 2]);
    const capped = search(1000, { start_rate: 10, goodput_target: 0.9, max_request_rate: 30 });
    assert.deepEqual(capped.rates, [10, 20, 30]);
    assert.deepEqual(capped.result, { done: '--max-request-rate 30/s met the target', max_request_rate: 30 });
    const none = search(0, { start_rate: 1, goodput_target: 0.9, max_request_rate: null });
    assert.ok('done' in none.result);
    assert.equal(none.result.max_request_rate, null);
    assert.ok(none.rates.length <= SEARCH_MAX_STEPS);
    assert.match(stoppingRule({ start_rate: 1, goodput_target: 0.9, max_request_rate: 30 }), /double the rate from 1\/s .* goodput share ≥ 0\.9 \(never above --max-request-rate 30\/s.*bisect .* within 5 %/);
  });
});
