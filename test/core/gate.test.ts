import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isJoulebenchError } from '../../src/core/errors.js';
import { checkGate, parseGate } from '../../src/core/gate.js';

describe('parseGate', () => {
  it('reads comma-separated conditions with every operator', () => {
    const g = parseGate('joules_per_correct_pct>5, accuracy_pp_delta<-1,latency_p95_pct >= 10.5,accuracy_pp_delta<=-2e0');
    assert.deepEqual(
      g.map((c) => [c.metric, c.op, c.threshold]),
      [
        ['joules_per_correct_pct', '>', 5],
        ['accuracy_pp_delta', '<', -1],
        ['latency_p95_pct', '>=', 10.5],
        ['accuracy_pp_delta', '<=', -2],
      ],
    );
  });

  for (const bad of ['', 'joules_per_correct_pct', 'joules_per_correct_pct>', 'joules_per_correct_pct>>5', 'x>5', 'accuracy_pp_delta<-1,', 'joules_per_correct_pct=5', 'joules_per_correct_pct>5%']) {
    it(`refuses "${bad}" as usage (exit 2) with the reason`, () => {
      assert.throws(
        () => parseGate(bad),
        (e: unknown) => isJoulebenchError(e) && e.code === 'E_USAGE' && e.exitCode === 2 && /--fail-on/.test(e.message),
      );
    });
  }
});

describe('checkGate', () => {
  const values = { joules_per_correct_pct: 6, latency_p95_pct: -3, accuracy_pp_delta: -0.5 };
  it('names each crossed condition and only those', () => {
    const f = checkGate(values, parseGate('joules_per_correct_pct>5,accuracy_pp_delta<-1'));
    assert.equal(f.length, 1);
    assert.match(f[0]!.message, /joules_per_correct_pct>5: joules_per_correct_pct is 6/);
  });
  it('a boundary value crosses only with the inclusive operator', () => {
    assert.equal(checkGate(values, parseGate('joules_per_correct_pct>6')).length, 0);
    assert.equal(checkGate(values, parseGate('joules_per_correct_pct>=6')).length, 1);
  });
  it('an n/a figure fails the gate rather than passing silently', () => {
    const f = checkGate({ ...values, joules_per_correct_pct: null }, parseGate('joules_per_correct_pct>5'));
    assert.equal(f.length, 1);
    assert.match(f[0]!.message, /n\/a/);
  });
});
