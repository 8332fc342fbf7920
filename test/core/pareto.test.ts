import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dominates, paretoFront, paretoVerdicts, type Objective } from '../../src/core/pareto.js';

const ACC_J: Objective[] = [
  { name: 'acc', goal: 'max' },
  { name: 'j', goal: 'min' },
];
const p = (id: string, acc: number | null, j: number | null) => ({ id, values: { acc, j } });

describe('pareto', () => {
  test('keeps the trade-off points and drops the dominated ones', () => {
    const pts = [p('cheap', 50, 1), p('good', 90, 10), p('bad', 40, 5), p('mid', 70, 3)];
    assert.deepEqual(paretoFront(pts, ACC_J).map((x) => x.id), ['cheap', 'good', 'mid']);
    const v = paretoVerdicts(pts, ACC_J);
    assert.deepEqual(v[2]?.dominated_by, ['cheap', 'mid']);
  });

  test('direction matters: flipping a goal changes the frontier', () => {
    const pts = [p('a', 50, 1), p('b', 90, 10)];
    assert.deepEqual(paretoFront(pts, [{ name: 'acc', goal: 'max' }, { name: 'j', goal: 'max' }]).map((x) => x.id), ['b']);
    assert.deepEqual(paretoFront(pts, [{ name: 'acc', goal: 'min' }, { name: 'j', goal: 'min' }]).map((x) => x.id), ['a']);
  });

  test('ties on one objective: the better on the other wins; exact duplicates both stay', () => {
    assert.deepEqual(paretoFront([p('a', 80, 2), p('b', 80, 3)], ACC_J).map((x) => x.id), ['a']);
    assert.deepEqual(paretoFront([p('a', 80, 2), p('b', 80, 2), p('c', 70, 9)], ACC_J).map((x) => x.id), ['a', 'b']);
    assert.equal(dominates(p('a', 80, 2), p('b', 80, 2), ACC_J), false);
  });

  test('unknown values are never on the frontier and dominate nothing', () => {
    const pts = [p('unknown', 100, null), p('known', 10, 50), p('nan', Number.NaN, 1)];
    const v = paretoVerdicts(pts, ACC_J);
    assert.deepEqual(v.map((x) => [x.id, x.optimal, x.comparable]), [
      ['unknown', false, false],
      ['known', true, true],
      ['nan', false, false],
    ]);
  });

  test('a single point is optimal; no objectives means nothing dominates', () => {
    assert.equal(paretoFront([p('only', 1, 1)], ACC_J).length, 1);
    assert.equal(paretoFront([p('a', 1, 1), p('b', 2, 0)], []).length, 2);
  });
});
