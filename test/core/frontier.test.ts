import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { armFrontiers, rankedFrontier, type Arm } from '../../src/core/frontier.js';
import type { Objective, ParetoPoint } from '../../src/core/pareto.js';

const obj = (spec: Record<string, 'max' | 'min'>): Objective[] => Object.entries(spec).map(([name, goal]) => ({ name, goal }));
const ACC_J = obj({ acc: 'max', j: 'min' });
const paretoFrontier = rankedFrontier;
const pt = (id: string, acc: number | null, j: number | null): ParetoPoint => ({ id, values: { acc, j } });
const optimalIds = (points: ParetoPoint[], obj = ACC_J): string[] =>
  paretoFrontier(points, obj).verdicts.filter((v) => v.optimal).map((v) => v.id).sort();

describe('rankedFrontier', () => {
  it('keeps the points no other point beats on both objectives', () => {
    // a: accurate and expensive; b: cheap and worse; c: dominated by a (less accurate, dearer); d: by b.
    const points = [pt('a', 90, 10), pt('b', 60, 2), pt('c', 80, 12), pt('d', 50, 3), pt('e', 70, 5)];
    const r = paretoFrontier(points, ACC_J);
    assert.deepEqual(optimalIds(points), ['a', 'b', 'e']);
    assert.deepEqual(r.verdicts.find((v) => v.id === 'c')!.dominated_by, ['a']);
    assert.deepEqual(r.verdicts.find((v) => v.id === 'd')!.dominated_by.sort(), ['b']);
    // Sorted along the first objective (accuracy, maximised): most accurate first.
    assert.deepEqual(r.frontier, ['a', 'e', 'b']);
  });

  it('keeps exact duplicates of an optimal point, all of them', () => {
    const points = [pt('a', 90, 10), pt('a2', 90, 10), pt('b', 60, 2), pt('worse', 90, 11)];
    assert.deepEqual(optimalIds(points), ['a', 'a2', 'b']);
    const r = paretoFrontier(points, ACC_J);
    assert.deepEqual(r.verdicts.find((v) => v.id === 'worse')!.dominated_by.sort(), ['a', 'a2']);
    // Equal on the first objective: the tie is broken by id, so the order is stable.
    assert.deepEqual(r.frontier, ['a', 'a2', 'b']);
  });

  it('a tie on one objective is decided by the other', () => {
    // Same accuracy, different energy: the cheaper dominates. Same energy, different accuracy: the better.
    assert.deepEqual(optimalIds([pt('x', 80, 5), pt('y', 80, 6)]), ['x']);
    assert.deepEqual(optimalIds([pt('x', 80, 5), pt('y', 81, 5)]), ['y']);
  });

  it('duplicates of a dominated point stay dominated', () => {
    const points = [pt('best', 95, 1), pt('d1', 50, 9), pt('d2', 50, 9)];
    assert.deepEqual(optimalIds(points), ['best']);
  });

  it('never places a point with a missing or non-finite objective, and says why', () => {
    const points = [pt('a', 90, 10), pt('nothing-correct', 0, null), { id: 'inf', values: { acc: 99, j: Infinity } }, { id: 'nan', values: { acc: NaN, j: 1 } }];
    const r = paretoFrontier(points, ACC_J);
    assert.deepEqual(r.frontier, ['a']);
    for (const id of ['nothing-correct', 'inf', 'nan']) {
      const v = r.verdicts.find((x) => x.id === id)!;
      assert.equal(v.optimal, false);
      assert.match(v.excluded ?? '', /no finite value/);
    }
    // An excluded point does not dominate anything, however good its other value.
    assert.equal(r.verdicts[0]!.optimal, true);
  });

  it('respects the direction of each objective', () => {
    const points = [pt('a', 90, 10), pt('b', 60, 2)];
    // Maximising both: a has higher acc and higher j, so it dominates b.
    assert.deepEqual(optimalIds(points, obj({ acc: 'max', j: 'max' })), ['a']);
    // Minimising both: b dominates.
    assert.deepEqual(optimalIds(points, obj({ acc: 'min', j: 'min' })), ['b']);
  });

  it('works with three objectives and with one', () => {
    const three = obj({ acc: 'max', j: 'min', p95: 'min' });
    const p = (id: string, acc: number, j: number, p95: number): ParetoPoint => ({ id, values: { acc, j, p95 } });
    const points = [p('a', 90, 10, 100), p('b', 90, 10, 50), p('c', 80, 5, 500)];
    assert.deepEqual(optimalIds(points, three), ['b', 'c']);
    assert.deepEqual(paretoFrontier([p('a', 1, 0, 0), p('b', 2, 0, 0), p('c', 2, 0, 0)], obj({ acc: 'max' })).frontier, ['b', 'c']);
    assert.throws(() => paretoFrontier(points, []), /at least one objective/);
  });

  it('handles no points and a single point', () => {
    assert.deepEqual(paretoFrontier([], ACC_J).frontier, []);
    assert.deepEqual(paretoFrontier([pt('only', 1, 1)], ACC_J).frontier, ['only']);
  });

});

describe('armFrontiers', () => {
  const arm = (id: string, acc: number | null, j: number | null, usd: number | null, p95: number | null): Arm => ({
    id,
    accuracy_pct: acc,
    joules_per_correct: j,
    usd_per_correct: usd,
    latency_p95_ms: p95,
    energy_source: 'model',
    below_floor_count: 0,
  });

  it('reports the three trade-offs separately', () => {
    const f = armFrontiers([arm('big', 90, 100, 0.01, 900), arm('small', 70, 10, 0.02, 100), arm('mid', 80, 50, null, 1000)]);
    assert.deepEqual(f.frontiers.energy.frontier, ['big', 'mid', 'small']);
    assert.deepEqual(f.frontiers.cost.frontier, ['big']);
    assert.match(f.frontiers.cost.verdicts.find((v) => v.id === 'mid')!.excluded!, /usd_per_correct/);
    assert.deepEqual(f.frontiers.latency.frontier, ['big', 'small']);
  });

  it('refuses two arms with one id', () => {
    assert.throws(() => armFrontiers([arm('x', 1, 1, 1, 1), arm('x', 2, 2, 2, 2)]), /duplicate arm id/);
  });
});

describe('armFrontiers: comparability', () => {
  const arm = (id: string, acc: number, jpc: number, source: string, asked: string): Arm => ({
    id,
    accuracy_pct: acc,
    joules_per_correct: jpc,
    usd_per_correct: null,
    latency_p95_ms: 10,
    energy_source: source,
    below_floor_count: 0,
    asked,
  });
  it('withholds the energy frontier when arms were metered by different sources', () => {
    const f = armFrontiers([arm('model', 80, 20, 'model', 'd1'), arm('estimate', 80, 0.01, 'estimate', 'd1')]);
    assert.deepEqual(f.frontiers.energy.frontier, [], 'a model against an estimate is no trade-off');
    assert.match(f.frontiers.energy.verdicts[0]!.excluded ?? '', /different sources \(estimate, model\)/);
    assert.deepEqual(f.frontiers.latency.frontier, ['estimate', 'model'], 'latency is still comparable');
  });
  it('withholds every frontier when arms answered different questions', () => {
    const f = armFrontiers([arm('a', 80, 20, 'model', 'd1'), arm('b', 90, 10, 'model', 'd2')]);
    for (const axis of ['energy', 'cost', 'latency'] as const) {
      assert.deepEqual(f.frontiers[axis].frontier, [], `${axis} withheld`);
      assert.match(f.frontiers[axis].verdicts[1]!.excluded ?? '', /different questions/);
    }
  });
});

describe('armFrontiers: a mixed list still ranks its comparable subset', () => {
  const arm = (id: string, acc: number, jpc: number, source: string, asked: string): Arm => ({
    id,
    accuracy_pct: acc,
    joules_per_correct: jpc,
    usd_per_correct: null,
    latency_p95_ms: 10,
    energy_source: source,
    below_floor_count: 0,
    asked,
  });
  it('ranks the arms that answered the same questions and says why the odd one is withheld', () => {
    const f = armFrontiers([arm('a', 80, 20, 'model', 'd1'), arm('b', 90, 10, 'model', 'd1'), arm('other', 99, 1, 'model', 'd2')]);
    assert.deepEqual(f.frontiers.energy.frontier, ['b'], 'b dominates a; other is not in the ranking');
    const other = f.frontiers.energy.verdicts.find((v) => v.id === 'other')!;
    assert.match(other.excluded ?? '', /answered different questions \(d2\) from the ranked arms \(d1\)/);
    assert.equal(f.frontiers.energy.verdicts.find((v) => v.id === 'a')!.dominated_by[0], 'b');
  });
  it('ranks the energy frontier over the majority meter and names the odd meter', () => {
    const f = armFrontiers([arm('a', 80, 20, 'rapl', 'd1'), arm('b', 90, 10, 'rapl', 'd1'), arm('m', 95, 1, 'model', 'd1')]);
    assert.deepEqual(f.frontiers.energy.frontier, ['b']);
    assert.match(f.frontiers.energy.verdicts[2]!.excluded ?? '', /energy measured by model, the ranked arms' by rapl/);
    assert.deepEqual(f.frontiers.latency.frontier, ['m'], 'latency compares all three');
  });
});

describe('frontier text says why a frontier is empty', () => {
  it('two arms over different questions: the reason, not "no arm has both figures"', async () => {
    const { renderFrontierTable } = await import('../../src/report/frontier-table.js');
    const arm = (id: string, asked: string): Arm => ({ id, accuracy_pct: 50, joules_per_correct: 1, usd_per_correct: 0, latency_p95_ms: 1, energy_source: 'model', below_floor_count: 0, asked });
    const text = renderFrontierTable(armFrontiers([arm('x', 'd1'), arm('y', 'd2')]));
    assert.match(text, /accuracy ↑ vs J\/correct ↓: \(none placed: not comparable, the arms answered different questions/);
    assert.doesNotMatch(text, /no arm has both figures/);
  });
});
