import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reportWarnings } from '../../src/report/run-warnings.js';

const base = { total_usd: null, target: 'ollama:m', case_count: 4, cost_unknown_count: 4 };

test('no price parts: unbilled tokens are named as the cause', () => {
  const w = reportWarnings(base);
  assert.equal(w.length, 1);
  assert.match(w[0]!, /tokens were used but no price bills them/);
});

test('an electricity price with no energy figure names the energy, not the token prices', () => {
  const w = reportWarnings({ ...base, usd_tokens_source: null, electricity_usd_per_kwh: 0.3, usd_energy: null, hardware_usd_per_hour: null, usd_hardware: null });
  assert.deepEqual(w, ['cost unknown for ollama:m: an electricity price is set but the run has no energy figure (see energy source and J/correct above)']);
});

test('a hardware price with no wall time is named; some billed cases with others unknown still name the tokens', () => {
  const w = reportWarnings({ ...base, cost_unknown_count: 1, usd_tokens_source: 'cases', electricity_usd_per_kwh: null, usd_energy: null, hardware_usd_per_hour: 2, usd_hardware: null });
  assert.equal(w.length, 2);
  assert.match(w[0]!, /1 of 4 case\(s\).*no price bills them/);
  assert.match(w[1]!, /a hardware price is set but the run states no wall time/);
  assert.deepEqual(reportWarnings({ ...base, total_usd: 0.5 }), []);
});
