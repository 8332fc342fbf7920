import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  binomialHalfCdf,
  bootstrapCi,
  bootstrapCis,
  isInterval,
  mcnemar,
  normalQuantile,
  percentileStatistics,
  ratioStatistic,
  seededRng,
  spreadOf,
  wilson,
  type Interval,
  type IntervalResult,
} from '../../src/stats/index.js';

const close = (a: number, b: number, tol: number, what = '') => assert.ok(Math.abs(a - b) <= tol, `${what} ${a} vs ${b} (tol ${tol})`);
const iv = (r: IntervalResult): Interval => {
  assert.ok(isInterval(r), `no interval: ${(r as { reason?: string }).reason}`);
  return r;
};

describe('wilson', () => {
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3.
  const published: [number, number, number, number][] = [
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ];
  for (const [k, n, lo, hi] of published) {
    it(`${k}/${n} matches Newcombe's published interval`, () => {
      const r = iv(wilson(k, n));
      close(r.low, lo, 5e-5, 'low');
      close(r.high, hi, 5e-5, 'high');
      assert.equal(r.method, 'wilson');
      assert.equal(r.level, 0.95);
    });
  }
  it('equals the roots of the score equation (p̂ − p)² = z² p(1 − p)/n, solved independently', () => {
    const z = 1.959963984540054;
    for (const [k, n] of [[3, 10], [50, 50], [7, 1000], [499, 1000], [2, 2]] as const) {
      const ph = k / n;
      const A = 1 + (z * z) / n;
      const B = -(2 * ph + (z * z) / n);
      const C = ph * ph;
      const disc = Math.sqrt(B * B - 4 * A * C);
      const r = iv(wilson(k, n));
      close(r.low, (-B - disc) / (2 * A), 1e-8, `low ${k}/${n}`);
      close(r.high, (-B + disc) / (2 * A), 1e-8, `high ${k}/${n}`);
    }
  });
  it('gives no interval from fewer than 2 trials, and refuses impossible counts', () => {
    assert.deepEqual(wilson(1, 1), { reason: 'fewer than 2 scored cases (1)' });
    assert.deepEqual(wilson(0, 0), { reason: 'fewer than 2 scored cases (0)' });
    assert.throws(() => wilson(3, 2), RangeError);
    assert.throws(() => wilson(1.5, 2), RangeError);
    assert.throws(() => wilson(1, 10, 1), RangeError);
  });
  it('z for 95 % is 1.959964 (normal quantile)', () => {
    close(normalQuantile(0.975), 1.959963984540054, 1e-8);
    close(normalQuantile(0.5), 0, 1e-12);
    close(normalQuantile(0.005), -2.5758293035489, 1e-8);
  });
});

/** Exact two-sided McNemar p from the binomial, with big integers (no floating point until the end). */
function exactMcNemarP(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let coef = 1n;
  let tail = 0n;
  for (let i = 0; i <= k; i++) {
    tail += coef;
    coef = (coef * BigInt(n - i)) / BigInt(i + 1);
  }
  const denom = 1n << BigInt(n);
  // 2·tail/2^n with 30 significant digits, then to a double.
  const scaled = (2n * tail * 10n ** 30n) / denom;
  return Math.min(1, Number(scaled) / 1e30);
}

describe('mcnemar (exact)', () => {
  for (const [b, c] of [[0, 0], [0, 5], [1, 9], [3, 3], [10, 25], [40, 61], [120, 180], [700, 800]] as const) {
    it(`b=${b}, c=${c} equals the binomial computed with big integers`, () => {
      const r = mcnemar(b, c);
      const want = exactMcNemarP(b, c);
      assert.ok(Math.abs(r.p_value - want) <= 1e-12 + 1e-9 * want, `${r.p_value} vs ${want}`);
      assert.equal(r.baseline_only, b);
      assert.equal(r.candidate_only, c);
      assert.equal(r.method, 'mcnemar-exact');
    });
  }
  it('is symmetric, and 1 with no discordant pair', () => {
    assert.equal(mcnemar(4, 11).p_value, mcnemar(11, 4).p_value);
    assert.equal(mcnemar(0, 0).p_value, 1);
    // 0 vs 6: p = 2/64 exactly.
    assert.equal(mcnemar(0, 6).p_value, 2 / 64);
  });
  it('does not overflow for thousands of discordant pairs', () => {
    const p = mcnemar(4000, 4400).p_value;
    assert.ok(p > 0 && p < 1e-4, String(p));
    assert.equal(binomialHalfCdf(10, 10), 1);
  });
  it('refuses negative or fractional counts', () => {
    assert.throws(() => mcnemar(-1, 2), RangeError);
    assert.throws(() => mcnemar(1.5, 2), RangeError);
  });
});

/** P(Bin(n, p) >= k), exactly enough in log space. */
function binomUpper(n: number, p: number, k: number): number {
  if (k <= 0) return 1;
  let s = 0;
  for (let i = k; i <= n; i++) {
    let lc = 0;
    for (let t = 0; t < i; t++) lc += Math.log(n - t) - Math.log(t + 1);
    s += Math.exp(lc + i * Math.log(p) + (n - i) * Math.log1p(-p));
  }
  return s;
}

describe('bootstrap', () => {
  it("a percentile's interval matches its exact bootstrap distribution, P(X*(k) ≤ x(j)) = P(Bin(n, j/n) ≥ k)", () => {
    const n = 40;
    const xs = Array.from({ length: n }, (_, i) => (i + 1) * 10); // distinct, sorted
    const k = Math.ceil(0.95 * n); // nearest-rank p95 of a resample is its k-th smallest
    // Exact quantiles of the bootstrap distribution of the p95: the smallest x(j) with CDF ≥ q.
    const cdf = (j: number) => binomUpper(n, j / n, k);
    const exactQuantile = (q: number) => {
      for (let j = 1; j <= n; j++) if (cdf(j) >= q) return xs[j - 1]!;
      return xs[n - 1]!;
    };
    const [stat] = percentileStatistics(xs, xs.map((_, i) => i), [95]);
    const r = iv(bootstrapCi(n, stat!, { seed: 'sha256:test', resamples: 20000 }));
    // Monte Carlo with 20000 resamples lands on the exact quantile or one observation beside it.
    assert.ok(Math.abs(r.low - exactQuantile(0.025)) <= 10, `low ${r.low} vs ${exactQuantile(0.025)}`);
    assert.ok(Math.abs(r.high - exactQuantile(0.975)) <= 10, `high ${r.high} vs ${exactQuantile(0.975)}`);
  });

  it('a weighted ratio (joules per weighted correct) matches full enumeration of every resample of 5 cases', () => {
    const joules = [2, 5, 3, 9, 4];
    const wcorrect = [1, 0, 0.5, 2, 1]; // weight × correct: weights travel with their case
    const n = joules.length;
    const all: number[] = [];
    const idx = new Array(n).fill(0);
    for (let t = 0; t < n ** n; t++) {
      let a = 0;
      let b = 0;
      let x = t;
      for (let i = 0; i < n; i++) {
        idx[i] = x % n;
        x = Math.floor(x / n);
        a += joules[idx[i]]!;
        b += wcorrect[idx[i]]!;
      }
      all.push(b === 0 ? Infinity : a / b);
    }
    all.sort((p, q) => p - q);
    const q = (p: number) => all[Math.ceil(p * all.length) - 1]!;
    const r = iv(bootstrapCi(n, ratioStatistic(joules, wcorrect), { seed: 7, resamples: 50000 }));
    // Between the exact 2 % and 3 % quantiles, and the exact 97 % and 98 %.
    assert.ok(r.low >= q(0.02) && r.low <= q(0.03), `low ${r.low} not in [${q(0.02)}, ${q(0.03)}]`);
    assert.ok(r.high >= q(0.97) && r.high <= q(0.98), `high ${r.high} not in [${q(0.97)}, ${q(0.98)}]`);
  });

  it('is deterministic for a seed, differs for another, and names its method and level', () => {
    const v = Array.from({ length: 30 }, (_, i) => ((i * 7919) % 31) + 1);
    const ones = v.map(() => 1);
    const a = bootstrapCi(v.length, ratioStatistic(v, ones), { seed: 'sha256:aaa', resamples: 500 });
    const b = bootstrapCi(v.length, ratioStatistic(v, ones), { seed: 'sha256:aaa', resamples: 500 });
    const c = bootstrapCi(v.length, ratioStatistic(v, ones), { seed: 'sha256:bbb', resamples: 500 });
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.equal(iv(a).method, 'bootstrap');
    assert.equal(iv(bootstrapCi(v.length, ratioStatistic(v, ones), { seed: 1, resamples: 500, level: 0.9 })).level, 0.9);
  });

  it('nothing from fewer than 2 units; an unbounded end is a reason, not a number', () => {
    assert.deepEqual(bootstrapCi(1, () => 1, { seed: 1 }), { reason: 'fewer than 2 cases to resample (1)' });
    // One correct case of 10: many resamples have nothing correct, so J/correct is unbounded above.
    const r = bootstrapCi(10, ratioStatistic(new Array(10).fill(1), [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]), { seed: 1, resamples: 1000 });
    assert.ok(!isInterval(r) && /unbounded: \d+ of 1000 resamples/.test(r.reason), JSON.stringify(r));
    assert.throws(() => bootstrapCi(5, () => NaN, { seed: 1, resamples: 3 }), /NaN/);
  });

  it('evaluates all statistics on the same resamples (a statistic and its double move together)', () => {
    const v = [1, 4, 2, 8, 5, 7, 3, 6];
    const ones = v.map(() => 1);
    const mean = ratioStatistic(v, ones);
    const r = bootstrapCis(v.length, { a: mean, b: (c, i) => 2 * mean(c, i) }, { seed: 3, resamples: 400 });
    assert.equal(iv(r.b).low, 2 * iv(r.a).low);
    assert.equal(iv(r.b).high, 2 * iv(r.a).high);
  });

  it('percentiles over units with several observations each draw a unit with all of them', () => {
    // Two units: unit 0 holds latencies 1 and 2, unit 1 holds 100 and 200. Any resample is {0,0}, {0,1} or {1,1}.
    const [p50] = percentileStatistics([1, 2, 100, 200], [0, 0, 1, 1], [50]);
    assert.equal(p50!(new Uint32Array([2, 0]), 0), 1);
    assert.equal(p50!(new Uint32Array([1, 1]), 1), 2);
    assert.equal(p50!(new Uint32Array([0, 2]), 2), 100);
  });

  it('the generator is uniform enough (chi-square over 10 bins)', () => {
    const rng = seededRng('x');
    const bins = new Array(10).fill(0);
    for (let i = 0; i < 100000; i++) bins[rng.below(10)]++;
    const chi = bins.reduce((a, o) => a + (o - 10000) ** 2 / 10000, 0);
    assert.ok(chi < 27.88, `chi-square ${chi} (p < 0.001 at 9 df)`);
  });
});

describe('spreadOf', () => {
  it('mean, sample sd, min and max; nulls skipped; null for none', () => {
    const s = spreadOf([2, 4, null, 4, 4, 5, 5, 7, 9])!;
    assert.equal(s.n, 8);
    assert.equal(s.mean, 5);
    close(s.sd!, Math.sqrt(32 / 7), 1e-12);
    assert.equal(s.min, 2);
    assert.equal(s.max, 9);
    assert.equal(spreadOf([3])!.sd, null);
    assert.equal(spreadOf([null]), null);
  });
});
