import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Aggregator, type ReportContext } from '../../src/core/aggregate.js';
import { nearestRanks, NumberColumn } from '../../src/core/number-column.js';
import { nearestRank } from '../../src/core/stats.js';
import type { CaseResult } from '../../src/core/types.js';
import { seededRng } from '../../src/stats/rng.js';
import { CTX, result } from '../helpers/results.js';

const rng = seededRng('aggregate-columns');
const pick = <T>(xs: readonly T[]): T => xs[rng.below(xs.length)]!;

/** Values of every kind a column can meet: whole, fractional, huge, negative, -0, NaN, ±Infinity. */
const VALUE_KINDS: ((j: number) => number)[] = [
  () => 7,
  (j) => j,
  () => rng.below(2000),
  () => rng.below(1000) / 8,
  () => rng.below(1000) / 7,
  () => pick([-0, 0, 1]),
  () => pick([NaN, 3]),
  () => pick([2 ** 24 + 1, 2 ** 40 + 0.5, 2 ** 53, 4294967295, 4294967296]),
  () => pick([Infinity, -Infinity, -1, -(2 ** 31)]),
];

describe('NumberColumn: every value read back exactly, stored no wider than needed', () => {
  it('random runs of mixed kinds: view, at and the storage mode', () => {
    for (let trial = 0; trial < 300; trial++) {
      const n = rng.below(3000);
      const kinds = Array.from({ length: 1 + rng.below(3) }, () => pick(VALUE_KINDS));
      // Mostly one kind, switching kind now and then (a column widens mid-way).
      let kind = kinds[0]!;
      const values = Array.from({ length: n }, (_, j) => {
        if (rng.below(200) === 0) kind = pick(kinds);
        return kind(j);
      });
      const col = new NumberColumn({ index: trial % 2 === 0 });
      values.forEach((v) => col.push(v));
      assert.equal(col.length, n);
      const view = col.view();
      assert.equal(view.length, n);
      for (let j = 0; j < n; j++) {
        assert.ok(Object.is(view[j], values[j]), `trial ${trial}: view[${j}] = ${view[j]}, pushed ${values[j]}`);
        assert.ok(Object.is(col.at(j), values[j]), `trial ${trial}: at(${j})`);
      }
      assert.deepEqual([...view].map(String), values.map(String), 'iterable');
      const allSame = values.every((v) => Object.is(v, values[0]));
      const isIndex = trial % 2 === 0 && values.every((v, j) => Object.is(v, j));
      const f32 = values.every((v) => Object.is(Math.fround(v), v));
      const expected = isIndex ? 'index' : allSame && trial % 2 === 1 ? 'const' : f32 ? 'f32' : 'f64';
      if (n > 0) assert.equal(col.storage, expected, `trial ${trial}: ${values.slice(0, 5).join(',')}`);
      assert.equal(col.byteLength, expected === 'const' || expected === 'index' ? 0 : col.byteLength);
      if (expected === 'f32') assert.ok(col.byteLength <= 4 * Math.max(1024, 2 * n));
    }
  });

  it('a view is the values so far after more pushes, in every mode', () => {
    const col = new NumberColumn({ index: true });
    for (let j = 0; j < 5; j++) col.push(j);
    assert.deepEqual([...col.view()], [0, 1, 2, 3, 4]);
    col.push(5);
    assert.deepEqual([...col.view()], [0, 1, 2, 3, 4, 5]);
    col.push(0.5);
    assert.deepEqual([...col.view()], [0, 1, 2, 3, 4, 5, 0.5]);
    col.push(0.1);
    assert.deepEqual([...col.view()], [0, 1, 2, 3, 4, 5, 0.5, 0.1]);
    assert.equal(col.storage, 'f64');
  });

  it('nearestRanks: the nearest-rank percentiles of the values that are not NaN, then the NaN tail', () => {
    for (let trial = 0; trial < 300; trial++) {
      const n = rng.below(600);
      const kind = pick(VALUE_KINDS.filter((_, i) => i !== 8));
      const values = Array.from({ length: n }, (_, j) => (rng.below(9) === 0 ? NaN : Math.abs(kind(j))));
      const col = new NumberColumn({ wide: trial % 3 === 0 });
      values.forEach((v) => col.push(v));
      const tail = rng.below(3) === 0 ? rng.below(4) : 0;
      const known = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
      const all = [...known, ...Array<number>(tail).fill(NaN)];
      const ps = [50, 95, 99, 100, 0.1];
      const got = nearestRanks(col, ps, tail);
      const want = ps.map((p) => (all.length === 0 ? null : all[Math.max(1, Math.ceil((p / 100) * all.length - 1e-9)) - 1]!));
      assert.deepEqual(got.map(String), want.map(String), `trial ${trial}`);
      if (tail === 0 && known.length > 0) assert.deepEqual(got.map(String), ps.map((p) => String(nearestRank(known, p))));
    }
  });
});

/** Random scored results: repeats, out-of-order units, weights, unknown and -0 energy, huge latencies, errors. */
function randomRun(trial: number): { results: CaseResult[]; repeats: number } {
  const n = 1 + rng.below(250);
  const repeats = trial % 3 === 0 ? 1 + rng.below(3) : 1;
  const shuffled = trial % 4 === 1;
  const weights = trial % 5 === 2;
  const energy = pick(['none', 'all', 'some', 'zeros'] as const);
  const cost = pick(['none', 'all', 'some'] as const);
  const latency = pick(['whole', 'fraction', 'huge', 'zero', 'mixed'] as const);
  const ttft = pick(['none', 'some', 'all'] as const);
  const results: CaseResult[] = [];
  for (let pass = 0; pass < repeats; pass++) {
    const order = Array.from({ length: n }, (_, i) => i);
    if (shuffled) order.sort(() => rng.below(3) - 1);
    for (const index of order) {
      const lat =
        latency === 'whole' ? rng.below(3000)
        : latency === 'fraction' ? rng.below(300_000) / 1000
        : latency === 'huge' ? pick([2 ** 24 + 1.5, 2 ** 33, 4294967295.2, 12.5])
        : latency === 'zero' ? pick([0, -0, 0.4])
        : pick([0, 5, 2 ** 40, 0.25, 7_200_000.9]);
      const failed = rng.below(15) === 0;
      results.push(
        result({
          pass,
          index,
          case_id: `c${index}`,
          dataset: pick(['a', 'b']),
          stage: null,
          passed: failed ? null : pick([true, false, null, true]),
          weight: weights ? pick([1, 0.5, 2, 1 / 3]) : 1,
          joules: energy === 'none' ? null : energy === 'zeros' ? pick([0, -0]) : energy === 'some' && rng.below(4) === 0 ? null : rng.below(10_000) / 1e4,
          energy_source: 'model',
          cost_usd: cost === 'none' ? null : cost === 'some' && rng.below(4) === 0 ? null : rng.below(1000) / 1e7,
          latency_ms: lat,
          ttft_ms: ttft === 'none' || (ttft === 'some' && rng.below(2) === 0) ? null : rng.below(50_000) / 1000,
          error: failed ? { code: 'E_HTTP', message: 'boom' } : null,
        } as Partial<CaseResult>),
      );
    }
  }
  return { results, repeats };
}

describe('Aggregator: compact columns give the report of reference (Float64Array) columns, byte for byte', () => {
  it('random runs, with the bootstrap and without', () => {
    for (let trial = 0; trial < 120; trial++) {
      const { results, repeats } = randomRun(trial);
      const ctx: ReportContext = { ...CTX, repeats, bootstrap: trial % 2 === 0 ? 0 : 40, suite: { ...CTX.suite, digest: `sha256:${trial}` } };
      const compact = new Aggregator();
      const reference = new Aggregator({ columns: 'reference' });
      for (const r of results) {
        compact.add(r);
        reference.add(r);
      }
      assert.equal(JSON.stringify(compact.report(ctx)), JSON.stringify(reference.report(ctx)), `trial ${trial}`);
      // And the latency percentiles are those of the timed cases' whole milliseconds.
      const timed = results.filter((r) => r.error === null).map((r) => Math.floor(r.latency_ms));
      const rep = compact.report(ctx);
      assert.deepEqual([rep.latency_p50_ms, rep.latency_p95_ms, rep.latency_p99_ms].map(String), [50, 95, 99].map((p) => String(nearestRank(timed, p))));
    }
  });
});

describe('Aggregator: bytes the per-case columns hold', () => {
  const echoLike = (index: number, over: Partial<CaseResult> = {}): CaseResult =>
    result({ index, case_id: `c${index}`, stage: null, joules: null, energy_source: 'none', latency_ms: (index % 37) + 0.25, ...over });

  it('one pass, weight 1, no energy or cost: 1 byte (passed) + 4 (whole-ms latency) a case, ≤ 10 with the doubling', () => {
    const n = 100_000;
    const agg = new Aggregator();
    for (let i = 0; i < n; i++) agg.add(echoLike(i));
    // Before: seven Float64Array columns, an Int8Array and a second latency copy (~85 bytes a case at this n).
    assert.ok(agg.columnBytes / n <= 10, `${(agg.columnBytes / n).toFixed(1)} bytes a case`);
  });

  it('all latencies alike and no TTFT: about 1 byte a case', () => {
    const n = 50_000;
    const agg = new Aggregator();
    for (let i = 0; i < n; i++) agg.add(echoLike(i, { latency_ms: 0.3 }));
    assert.ok(agg.columnBytes / n <= 2.5, `${(agg.columnBytes / n).toFixed(1)} bytes a case`);
  });

  it('repeats, energy and cost known: the unit and pass are stored once they vary, narrow where they can be', () => {
    const n = 30_000;
    const agg = new Aggregator();
    for (let pass = 0; pass < 2; pass++) for (let i = 0; i < n; i++) agg.add(echoLike(i, { pass, joules: i / 7, energy_source: 'model', cost_usd: i / 3 }));
    // unit and pass 4 bytes each (f32), passed 1, latency 4, joules and usd 8 each: 29 bytes; ≤ 2× with the doubling.
    assert.ok(agg.columnBytes / (2 * n) <= 58, `${(agg.columnBytes / (2 * n)).toFixed(1)} bytes a case`);
  });
});
