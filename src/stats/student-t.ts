import { checkLevel, type Interval, type NoInterval } from './interval.js';

// Student's t and the t-intervals of repeated load runs (`--runs N`), as AIPerf reports over its profile runs.

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: ~15 significant digits). */
function lnGamma(x: number): number {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  // One Lentz step with the fraction's next coefficient: the factor it multiplies h by.
  const step = (aa: number): number => {
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    return d * c;
  };
  for (let m = 1; m <= 500; m++) {
    const m2 = 2 * m;
    h *= step((m * (b - m) * x) / ((a + m2 - 1) * (a + m2)));
    const del = step((-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1)));
    h *= del;
    if (Math.abs(del - 1) < 1e-16) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0). */
export function studentTCdf(t: number, df: number): number {
  if (!(df > 0)) throw new RangeError(`degrees of freedom must be > 0, got ${df}`);
  if (Number.isNaN(t)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The p-quantile of Student's t with `df` degrees of freedom (0 < p < 1, df > 0), to ~1e-12 relative. */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`degrees of freedom must be > 0, got ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  // The upper tail is monotone in t: widen a bracket, then bisect (robust for any df, and fast enough for a handful of figures).
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) {
    lo = hi;
    hi *= 2;
    if (hi > 1e300) return Infinity;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Coefficient of variation: sample standard deviation (n − 1) ÷ |mean|; null for fewer than 2 values or a mean of 0. */
export function coefficientOfVariation(values: readonly number[]): number | null {
  const n = values.length;
  if (n < 2) return null;
  const mean = values.reduce((s, v) => s + v, 0) / n;
  if (mean === 0) return null;
  return sampleSd(values, mean) / Math.abs(mean);
}

/** Sample standard deviation (n − 1 in the denominator) about `mean`. */
export function sampleSd(values: readonly number[], mean = values.reduce((s, v) => s + v, 0) / values.length): number {
  let ss = 0;
  for (const v of values) ss += (v - mean) ** 2;
  return Math.sqrt(ss / (values.length - 1));
}

/** A t-interval for a mean with what it was computed from. */
export interface TInterval extends Interval {
  method: 'student-t' | 'paired-t' | 'degenerate';
  n: number;
  mean: number;
  /** Sample standard deviation (n − 1). */
  sd: number;
  /** Standard error sd/√n. */
  se: number;
  /** t(1 − α/2, n − 1). */
  t_critical: number;
}

/** mean ± t(1 − α/2, n − 1)·sd/√n; a reason for fewer than 2 finite values; `degenerate` when all are equal. */
export function tInterval(values: readonly number[], level = 0.95, method: 'student-t' | 'paired-t' = 'student-t'): TInterval | NoInterval {
  checkLevel(level);
  const n = values.length;
  if (n < 2) return { reason: `${n} value${n === 1 ? '' : 's'}: a t-interval needs at least 2` };
  if (!values.every(Number.isFinite)) return { reason: 'a value is not a finite number' };
  const mean = values.reduce((s, v) => s + v, 0) / n;
  const sd = sampleSd(values, mean);
  const se = sd / Math.sqrt(n);
  const t = studentTQuantile(1 - (1 - level) / 2, n - 1);
  return { low: mean - t * se, high: mean + t * se, level, method: sd === 0 ? 'degenerate' : method, n, mean, sd, se, t_critical: t };
}

/** The t-interval of the differences `b[i] − a[i]` (run i of A with run i of B). */
export function pairedTInterval(a: readonly number[], b: readonly number[], level = 0.95): TInterval | NoInterval {
  if (a.length !== b.length) throw new RangeError(`paired lists differ in length (${a.length} and ${b.length})`);
  return tInterval(a.map((x, i) => b[i]! - x), level, 'paired-t');
}
