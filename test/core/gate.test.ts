import { compare } from '../../src/core/compare.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isJoulebenchError } from '../../src/core/errors.js';
import { checkGate, gateWhyNa, parseGate } from '../../src/core/gate.js';

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
  const values = { joules_per_correct_pct: 6, latency_p95_pct: -3, accuracy_pp_delta: -0.5, usd_per_correct_pct: 12, total_usd_pct: -4 };
  it('names each crossed condition and only those', () => {
    const f = checkGate(values, parseGate('joules_per_correct_pct>5,accuracy_pp_delta<-1'));
    assert.equal(f.length, 1);
    assert.match(f[0]!.message, /joules_per_correct_pct>5: joules_per_correct_pct is 6/);
  });
  it('gates on dollars: $/correct and total $ as % change', () => {
    const f = checkGate(values, parseGate('usd_per_correct_pct>10,total_usd_pct>0'));
    assert.deepEqual(f.map((x) => x.message), ['usd_per_correct_pct>10: usd_per_correct_pct is 12']);
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
  it('a figure that is 0 in both runs is no change (0 %), so a gate on it can pass', () => {
    const c = compare({ joules_per_correct: 2, latency_p95_ms: 0, accuracy_pct: 50 }, { joules_per_correct: 2, latency_p95_ms: 0, accuracy_pct: 50 });
    assert.equal(c.latency_p95_pct, 0);
    assert.deepEqual(checkGate(c, parseGate('latency_p95_pct>5'), { why: gateWhyNa(c) }), []);
  });
  it('a figure absent in one run says which run lacks it', () => {
    const c = compare({ joules_per_correct: null, latency_p95_ms: 10, accuracy_pct: 0 }, { joules_per_correct: 3, latency_p95_ms: null, accuracy_pct: 40 });
    const f = checkGate(c, parseGate('joules_per_correct_pct>5,latency_p95_pct>5'), { why: gateWhyNa(c) });
    assert.match(f[0]!.message, /joules_per_correct_pct is n\/a \(the baseline has no joules_per_correct\)/);
    assert.match(f[1]!.message, /latency_p95_pct is n\/a \(the candidate has no latency_p95_ms\)/);
    // A run with no prices has no $ figures: the gate on them names that run.
    const priced = { joules_per_correct: 1, latency_p95_ms: 1, accuracy_pct: 1, usd_per_correct: 0.002, total_usd: 0.01 };
    const unpriced = { ...priced, usd_per_correct: null, total_usd: null };
    const usd = compare(priced, unpriced);
    assert.deepEqual([usd.usd_per_correct_pct, usd.total_usd_pct], [null, null]);
    const g = checkGate(usd, parseGate('usd_per_correct_pct>5,total_usd_pct>5'), { why: gateWhyNa(usd) });
    assert.match(g[0]!.message, /usd_per_correct_pct is n\/a \(the candidate has no usd_per_correct\)/);
    assert.match(g[1]!.message, /total_usd_pct is n\/a \(the candidate has no total_usd\)/);
    const fromZero = compare({ joules_per_correct: 1, latency_p95_ms: 0, accuracy_pct: 1 }, { joules_per_correct: 1, latency_p95_ms: 4, accuracy_pct: 1 });
    assert.match(checkGate(fromZero, parseGate('latency_p95_pct>5'), { why: gateWhyNa(fromZero) })[0]!.message, /baseline's latency_p95_ms is 0/);
  });
});
