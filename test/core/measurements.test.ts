import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mmluMeasurements } from '../../src/core/measurements.js';
import type { CaseResult } from '../../src/core/types.js';

function result(over: Partial<CaseResult>): CaseResult {
  return {
    record: 'case', phase: 'scored', pass: 0, index: 0, case_id: 'x', dataset: 'd', response: 'A', stage: 'neural', expected: 'A',
    passed: true, score: null, weight: 1, joules: null, energy_source: 'none', below_floor: false, latency_ms: 10, ttft_ms: null,
    tpot_ms: null, prompt_tokens: 10, completion_tokens: 2, cost_usd: 0.001, attempts: 1, retry_overhead_ms: 0, error: null, ...over,
  };
}

test('mmlu.* with class and official flags; errored cases count as not correct', () => {
  const rs = [
    result({ latency_ms: 10 }),
    result({ latency_ms: 30, passed: false, attempts: 3, retry_overhead_ms: 600 }),
    result({ passed: false, response: null, error: { code: 'E_HTTP', status: 500, message: 'x' }, attempts: 3, retry_overhead_ms: 700, prompt_tokens: null, completion_tokens: null, cost_usd: null }),
    result({ phase: 'warmup', passed: false }),
  ];
  const { measurements: m, warnings } = mmluMeasurements(rs, { retry_enabled: true, prices_set: true });
  assert.deepEqual(Object.keys(m), ['mmlu.accuracy', 'mmlu.avg_latency_ms', 'mmlu.total_tokens', 'mmlu.cost_usd', 'mmlu.retry_count', 'mmlu.retry_overhead_ms']);
  assert.deepEqual(m['mmlu.accuracy'], { value: 0.333333, unit: 'fraction', class: 'deterministic', official: true });
  assert.deepEqual(m['mmlu.avg_latency_ms'], { value: 20, unit: 'ms', class: 'environmental', official: true });
  assert.equal(m['mmlu.total_tokens']!.value, 24);
  assert.equal(m['mmlu.cost_usd']!.value, 0.002);
  assert.deepEqual(m['mmlu.retry_count'], { value: 4, unit: 'attempts', class: 'environmental', official: false });
  assert.deepEqual(m['mmlu.retry_overhead_ms'], { value: 1300, unit: 'ms', class: 'environmental', official: false });
  assert.deepEqual(warnings, []);
});

test('cost omitted (not 0) with a warning when a price or usage is missing; retry block only when enabled', () => {
  const noPrice = mmluMeasurements([result({ cost_usd: null })], { retry_enabled: false, prices_set: false });
  assert.equal('mmlu.cost_usd' in noPrice.measurements, false);
  assert.match(noPrice.warnings.join(), /mmlu\.cost_usd omitted: no prices/);
  assert.equal('mmlu.retry_count' in noPrice.measurements, false);
  const noUsage = mmluMeasurements([result({ prompt_tokens: null, completion_tokens: null, cost_usd: null })], { retry_enabled: false, prices_set: true });
  assert.equal('mmlu.total_tokens' in noUsage.measurements, false);
  assert.equal('mmlu.cost_usd' in noUsage.measurements, false);
  assert.equal(noUsage.warnings.length, 2);
});
