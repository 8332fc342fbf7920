import assert from 'node:assert/strict';
import { it } from 'node:test';
import { checkGate, parseGate } from '../../src/core/gate.js';

const values = { joules_per_correct_pct: 3, latency_p95_pct: -4, accuracy_pp_delta: -2, usd_per_correct_pct: 7, total_usd_pct: 2 };
const at = (low: number, high: number) => ({ low, high, level: 0.95 });

it('--significant trips only when the whole interval is past the threshold, on either side', () => {
  const up = parseGate('joules_per_correct_pct>1');
  assert.equal(checkGate(values, up).length, 1, 'plain: the point estimate trips it');
  const sig = { joules_per_correct_pct: at(-2, 8), latency_p95_pct: at(-9, -1), accuracy_pp_delta: at(-5, 1), usd_per_correct_pct: at(5.5, 9), total_usd_pct: at(-1, 5) };
  assert.deepEqual(checkGate(values, up, { significant: sig }), []);
  assert.equal(checkGate(values, up, { significant: { ...sig, joules_per_correct_pct: at(1.5, 8) } }).length, 1);
  // '>' needs low > t, so an interval touching the threshold does not trip.
  assert.deepEqual(checkGate(values, up, { significant: { ...sig, joules_per_correct_pct: at(1, 8) } }), []);
  const down = parseGate('accuracy_pp_delta<-1');
  assert.deepEqual(checkGate(values, down, { significant: sig }), []);
  assert.equal(checkGate(values, down, { significant: { ...sig, accuracy_pp_delta: at(-5, -1.5) } }).length, 1);
  const none = checkGate(values, down, { significant: { ...sig, accuracy_pp_delta: null } });
  assert.match(none[0]!.message, /no interval/);
  // Dollars: the same rule.
  assert.equal(checkGate(values, parseGate('usd_per_correct_pct>5'), { significant: sig }).length, 1);
  assert.deepEqual(checkGate(values, parseGate('total_usd_pct>1'), { significant: sig }), []);
});
