import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pairedComparison as livePairedComparison, type PairedCase } from '../../src/stats/paired.js';
import { KeyTable, PairedColumns } from '../../src/stats/paired-columns.js';
import { seededRng, type Rng } from '../../src/stats/rng.js';
// The object-per-case implementation the columns replaced (src/stats/paired.ts before the change), kept as the reference.
import { pairedComparison as referenceComparison, type DollarRatios } from './fixtures/paired-reference.js';

/** The live comparison less the $ ratios the reference has not got. */
const pairedComparison = (...args: Parameters<typeof livePairedComparison>): Omit<ReturnType<typeof livePairedComparison>, DollarRatios> => {
  const { usd_per_correct_ratio: _u, total_usd_ratio: _t, ...rest } = livePairedComparison(...args);
  return rest;
};

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.nextU32() % xs.length]!;
const chance = (rng: Rng, p: number) => rng.nextU32() / 4294967296 < p;

/**
 * One side of a random comparison: `pass:index` keys (some passes repeated, some odd key strings,
 * repeated keys, a shuffled order), units that are the index or something else, every figure sometimes
 * unknown, latencies whole or not (sometimes huge, negative or infinite).
 */
function randomSide(rng: Rng, n: number, shape: { passes: number; shuffle: boolean; oddKeys: boolean; oddUnits: boolean; energyNulls: boolean; wideLatency: boolean }): PairedCase[] {
  const out: PairedCase[] = [];
  for (let i = 0; i < n; i++) {
    if (chance(rng, 0.1)) continue; // a case this side lacks
    const pass = rng.nextU32() % shape.passes;
    const key = shape.oddKeys && chance(rng, 0.1) ? pick(rng, ['x', 'case-7', '01:2', '0:1e3', ' 0:1']) : `${pass}:${i}`;
    const unit = shape.oddUnits ? pick(rng, [i, i * 1000, -i, i + 0.5, 2 ** 40, 7]) : i;
    const latency = chance(rng, 0.08)
      ? null
      : shape.wideLatency
        ? pick(rng, [Math.floor(rng.nextU32() / 16), -3, Infinity, 12.5, 2 ** 33, rng.nextU32() % 50])
        : rng.nextU32() % 400;
    const c: PairedCase = {
      key,
      unit,
      passed: chance(rng, 0.1) ? null : chance(rng, 0.6),
      weight: pick(rng, [1, 1, 1, 0.5, 2]),
      joules: shape.energyNulls && chance(rng, 0.05) ? null : pick(rng, [0.001, 0.25, 1.5, 3, 0]) * (1 + (rng.nextU32() % 7)),
      usd: chance(rng, 0.3) ? null : 0.0001 * (rng.nextU32() % 9),
      latency_ms: latency,
    };
    out.push(c);
    if (chance(rng, 0.04)) out.push({ ...c, latency_ms: latency === null ? 5 : latency + 1, passed: !c.passed }); // the same key again
  }
  if (shape.shuffle) {
    for (let i = out.length - 1; i > 0; i--) {
      const j = rng.nextU32() % (i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
  }
  return out;
}

describe('paired comparison over columns', () => {
  it('gives exactly what the object-per-case implementation gave, on 300 random comparisons', () => {
    const rng = seededRng('paired-columns');
    for (let t = 0; t < 300; t++) {
      const n = 1 + (rng.nextU32() % 120);
      const shape = {
        passes: pick(rng, [1, 1, 2, 3]),
        shuffle: chance(rng, 0.4),
        oddKeys: chance(rng, 0.2),
        oddUnits: chance(rng, 0.2),
        energyNulls: chance(rng, 0.3),
        wideLatency: chance(rng, 0.3),
      };
      const base = randomSide(rng, n, shape);
      const cand = randomSide(rng, n, shape);
      const opts = {
        seed: `sha256:${t}`,
        resamples: pick(rng, [0, 40]),
        maxUnits: pick(rng, [Infinity, 20, 0]),
        alpha: pick(rng, [0.05, 0.1]),
        energyComparable: chance(rng, 0.9),
      };
      assert.deepEqual(pairedComparison(base, cand, opts), referenceComparison(base, cand, opts), `comparison ${t} (${JSON.stringify(shape)})`);
    }
  });

  it('columns filled case by case compare as the same cases given as objects', () => {
    const rng = seededRng('paired-columns-push');
    for (let t = 0; t < 60; t++) {
      const sides = [0, 1].map(() => randomSide(rng, 80, { passes: 2, shuffle: chance(rng, 0.5), oddKeys: false, oddUnits: false, energyNulls: true, wideLatency: false }));
      const cols = sides.map((cases) => {
        const c = new PairedColumns();
        for (const x of cases) {
          const [pass, index] = x.key.split(':').map(Number);
          c.pushCase(pass!, index!, x.passed, x.weight, x.joules, x.usd, x.latency_ms);
        }
        return c;
      });
      const opts = { seed: 'sha256:s', resamples: 30 };
      const expected = referenceComparison(sides[0]!, sides[1]!, opts);
      assert.deepEqual(pairedComparison(cols[0]!, cols[1]!, opts), expected);
      // One side in columns, the other as objects: the keys still meet.
      assert.deepEqual(pairedComparison(cols[0]!, sides[1]!, opts), expected);
      assert.deepEqual(pairedComparison(sides[0]!, cols[1]!, opts), expected);
    }
  });

  it('reads every case back as it was given: null and NaN apart, -0 kept, odd keys by name', () => {
    const keys = new KeyTable();
    const cases: PairedCase[] = [
      { key: '0:0', unit: 0, passed: true, weight: 1, joules: null, usd: 0, latency_ms: 3 },
      { key: '2:5', unit: 5, passed: null, weight: 0.5, joules: NaN, usd: null, latency_ms: null },
      { key: 'odd', unit: -0, passed: false, weight: 1, joules: -0, usd: 1e-9, latency_ms: 2 ** 40 },
    ];
    const cols = PairedColumns.of(cases, keys);
    assert.equal(cols.length, 3);
    for (let j = 0; j < cases.length; j++) assert.deepEqual(cols.at(j, keys), cases[j]);
    assert.ok(Object.is(cols.at(2, keys).joules, -0));
    assert.equal(keys.number('odd'), keys.number('odd'));
    assert.notEqual(keys.number('odd'), keys.number('0:0'));
  });

  it('a single-pass run in case order keeps one byte a case plus its latencies', () => {
    const cols = new PairedColumns();
    for (let i = 0; i < 100_000; i++) cols.pushCase(0, i, i % 3 !== 0, 1, 0.5, null, i % 1000);
    // Keys, units, weights, joules and costs store nothing; latencies are whole ms (4 bytes); one flag byte.
    assert.ok(cols.byteLength <= 100_000 * 5 * 1.4, `${cols.byteLength} bytes`);
  });

  it('refuses a key it cannot hold exactly', () => {
    const cols = new PairedColumns();
    assert.throws(() => cols.pushCase(2 ** 20, 0, true, 1, 1, 1, 1), RangeError);
    assert.throws(() => cols.pushCase(0, -1, true, 1, 1, 1, 1), RangeError);
    assert.throws(() => cols.pushKeyed(NaN, 0, true, 1, 1, 1, 1), RangeError);
    assert.throws(() => cols.pushKeyed(2 ** 60, 0, true, 1, 1, 1, 1), RangeError);
  });
});
