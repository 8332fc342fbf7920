import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { denseUnits, timedByLatency } from '../../src/stats/report-ci.js';
import { seededRng } from '../../src/stats/rng.js';

const rng = seededRng('report-ci-compact');

/** The Map and object-per-case way these were computed before (the reference). */
function reference(unit: number[], latency: number[]): { u: number[]; values: number[]; units: number[] } {
  const index = new Map<number, number>();
  const u = unit.map((x) => {
    let i = index.get(x);
    if (i === undefined) index.set(x, (i = index.size));
    return i;
  });
  const timed = u.map((k, j) => ({ k, v: latency[j]! })).filter((x) => !Number.isNaN(x.v)).sort((a, b) => a.v - b.v);
  return { u, values: timed.map((x) => x.v), units: timed.map((x) => x.k) };
}

describe('report-ci compact columns: the same units and latency order as the Map and object sort', () => {
  it('whole-ms latencies with ties and NaN (packed keys), and odd values (fallback sort), small and huge units', () => {
    const spellings: ((j: number) => number)[] = [
      () => rng.below(50),
      () => (rng.below(10) === 0 ? NaN : rng.below(1000)),
      () => (rng.below(3) === 0 ? -0 : rng.below(5)),
      () => rng.below(100) - 50,
      () => rng.below(1000) / 7,
      () => [Infinity, -Infinity, NaN, 2 ** 60, 0][rng.below(5)]!,
    ];
    const units: ((j: number) => number)[] = [(j) => j % 37, () => rng.below(20), (j) => 1e12 + (j % 5), (j) => -(j % 3), (j) => j * 0.5];
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + rng.below(400);
      const lat = spellings[trial % spellings.length]!;
      const un = units[trial % units.length]!;
      const unit = Array.from({ length: n }, (_, j) => un(j));
      const latency = Array.from({ length: n }, (_, j) => lat(j));
      const ref = reference(unit, latency);
      const d = denseUnits(unit);
      assert.deepEqual([...d.u], ref.u);
      assert.equal(d.units, new Set(unit).size);
      const t = timedByLatency(latency, d.u);
      assert.deepEqual([...t.values].map((v) => (Object.is(v, -0) ? '-0' : v)), ref.values.map((v) => (Object.is(v, -0) ? '-0' : v)), `trial ${trial}`);
      assert.deepEqual([...t.units], ref.units, `trial ${trial}`);
    }
  });
});
