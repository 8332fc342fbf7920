import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coefficientOfVariation, pairedTInterval, studentTCdf, studentTQuantile, tInterval, type TInterval } from '../../src/index.js';

const close = (a: number, b: number, rel: number, what: string) => assert.ok(Math.abs(a - b) <= rel * Math.abs(b), `${what}: ${a} vs ${b}`);

describe('Student t distribution', () => {
  it('the 97.5 % quantile matches the printed t table (df 1, 2, 4, 9, 29, 120)', () => {
    // NIST/SEMATECH e-Handbook, table 1.3.6.7.2 (upper critical values of the t distribution, α = 0.025).
    const table: [number, number][] = [[1, 12.706], [2, 4.303], [4, 2.776], [9, 2.262], [29, 2.045], [120, 1.98]];
    for (const [df, t] of table) assert.equal(Number(studentTQuantile(0.975, df).toFixed(3)), t, `df ${df}`);
  });

  it('agrees with the closed forms for df 1 (Cauchy) and df 2', () => {
    for (const p of [0.6, 0.9, 0.975, 0.995]) {
      close(studentTQuantile(p, 1), Math.tan(Math.PI * (p - 0.5)), 1e-9, `df 1, p ${p}`);
      close(studentTQuantile(p, 2), (2 * p - 1) / Math.sqrt(2 * p * (1 - p)), 1e-9, `df 2, p ${p}`);
    }
    for (const t of [-3, -0.5, 0, 1, 7]) close(studentTCdf(t, 1), 0.5 + Math.atan(t) / Math.PI, 1e-12, `cdf df 1 at ${t}`);
  });

  it('tends to the normal quantile, is symmetric, and refuses nonsense', () => {
    close(studentTQuantile(0.975, 1e7), 1.959963985, 1e-6, 'df 1e7');
    assert.equal(studentTQuantile(0.025, 4), -studentTQuantile(0.975, 4));
    assert.equal(studentTQuantile(0.5, 3), 0);
    assert.throws(() => studentTQuantile(1, 3), RangeError);
    assert.throws(() => studentTQuantile(0.9, 0), RangeError);
  });
});

describe('t-interval over repeated runs', () => {
  it('mean ± t·s/√n for five runs (t from the table, s with n − 1)', () => {
    const v = [150, 152, 148, 155, 151];
    const r = tInterval(v) as TInterval;
    const sd = Math.sqrt((1.2 ** 2 + 0.8 ** 2 + 3.2 ** 2 + 3.8 ** 2 + 0.2 ** 2) / 4);
    const half = 2.776445105 * (sd / Math.sqrt(5));
    close(r.mean, 151.2, 1e-12, 'mean');
    close(r.sd, sd, 1e-12, 'sd');
    close(r.low, 151.2 - half, 1e-9, 'low');
    close(r.high, 151.2 + half, 1e-9, 'high');
    assert.equal(r.method, 'student-t');
    assert.equal(r.level, 0.95);
    close(r.t_critical, 2.776445105, 1e-9, 't');
  });

  it('one run has no interval; equal runs are degenerate; a non-finite value is refused', () => {
    assert.match((tInterval([3]) as { reason: string }).reason, /at least 2/);
    assert.equal((tInterval([2, 2, 2]) as TInterval).method, 'degenerate');
    assert.match((tInterval([1, NaN]) as { reason: string }).reason, /finite/);
  });

  it('a paired interval is the t-interval of the differences, b − a', () => {
    const r = pairedTInterval([10, 12, 11], [12, 15, 13]) as TInterval;
    // differences 2, 3, 2: mean 7/3, sd √(1/3), t(0.975, 2) = 4.302652730
    const half = 4.30265273 * Math.sqrt(1 / 3) / Math.sqrt(3);
    close(r.mean, 7 / 3, 1e-12, 'mean');
    close(r.low, 7 / 3 - half, 1e-8, 'low');
    close(r.high, 7 / 3 + half, 1e-8, 'high');
    assert.equal(r.method, 'paired-t');
    assert.throws(() => pairedTInterval([1], [1, 2]), RangeError);
  });

  it('coefficient of variation = sample sd ÷ |mean|; null for one value or a zero mean', () => {
    close(coefficientOfVariation([2, 4, 4, 4, 5, 5, 7, 9])!, Math.sqrt(32 / 7) / 5, 1e-12, 'cv');
    close(coefficientOfVariation([-2, -4])!, Math.sqrt(2) / 3, 1e-12, 'negative mean');
    assert.equal(coefficientOfVariation([5]), null);
    assert.equal(coefficientOfVariation([-1, 1]), null);
  });
});
