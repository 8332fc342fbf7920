import { checkLevel, labelDegenerate, type IntervalMethod, type IntervalResult } from './interval.js';
import { nearestRankAt } from './large-sample.js';
import { seededRng } from './rng.js';

/** A statistic of one resample (`counts[i]`: draws of unit i); `Infinity` (nothing correct) is allowed, NaN is not. */
export type ResampleStatistic = (counts: Uint32Array, resample: number) => number;

export interface BootstrapOptions {
  /** Resamples drawn (default 2000). */
  resamples?: number;
  /** Seed: a string (reports use the suite digest) or a 32-bit number. Same seed, same interval. */
  seed: string | number;
  /** Two-sided level (default 0.95). */
  level?: number;
  /** Names the method in the result (default `bootstrap`; paired comparisons say `paired-bootstrap`). */
  method?: Extract<IntervalMethod, 'bootstrap' | 'paired-bootstrap'>;
}

export const DEFAULT_RESAMPLES = 2000;

/** The most resampling units intervals are bootstrapped over; above it they are large-sample intervals (`large-sample.ts`). */
export const DEFAULT_BOOTSTRAP_MAX_UNITS = 20_000;

/** A unit limit as flags and results headers carry it: a whole number >= 0 (0: never bootstrap), or `'inf'`. */
export type BootstrapMaxUnits = number | 'inf';

/** The limit as a number (`'inf'` is Infinity); throws a RangeError on anything else. */
export function maxUnitsValue(limit: BootstrapMaxUnits | undefined): number {
  if (limit === undefined) return DEFAULT_BOOTSTRAP_MAX_UNITS;
  if (limit === 'inf') return Infinity;
  if (!isMaxUnits(limit)) throw new RangeError(`bootstrap_max_units must be a whole number >= 0 or "inf", got ${String(limit)}`);
  return limit;
}

/** Whether a value (e.g. a results header's) is a unit limit. */
export function isMaxUnits(v: unknown): v is BootstrapMaxUnits {
  return v === 'inf' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
}

/**
 * Percentile bootstrap intervals (Efron & Tibshirani 1993, ch. 13) for several statistics over the same resamples
 * of `n` units; a non-finite end gives a reason instead (docs/statistics.md).
 */
export function bootstrapCis<K extends string>(n: number, statistics: Readonly<Record<K, ResampleStatistic>>, opts: BootstrapOptions): Record<K, IntervalResult> {
  const level = checkLevel(opts.level ?? 0.95);
  const resamples = opts.resamples ?? DEFAULT_RESAMPLES;
  if (!Number.isInteger(resamples) || resamples < 1) throw new RangeError(`bootstrap: resamples must be an integer >= 1, got ${resamples}`);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`bootstrap: n must be an integer >= 0, got ${n}`);
  const names = Object.keys(statistics) as K[];
  const out = {} as Record<K, IntervalResult>;
  if (n < 2) {
    for (const k of names) out[k] = { reason: `fewer than 2 cases to resample (${n})` };
    return out;
  }
  const rng = seededRng(opts.seed);
  const counts = new Uint32Array(n);
  const values = names.map(() => new Float64Array(resamples));
  for (let b = 0; b < resamples; b++) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[rng.below(n)]!++;
    for (let s = 0; s < names.length; s++) {
      const v = statistics[names[s]!](counts, b);
      if (Number.isNaN(v)) throw new RangeError(`bootstrap: statistic ${names[s]} gave NaN`);
      values[s]![b] = v;
    }
  }
  const method = opts.method ?? 'bootstrap';
  names.forEach((k, s) => {
    out[k] = percentileInterval(values[s]!.sort(), level, method);
  });
  return out;
}

/** One statistic: {@link bootstrapCis} with a single entry. */
export function bootstrapCi(n: number, statistic: ResampleStatistic, opts: BootstrapOptions): IntervalResult {
  return bootstrapCis(n, { value: statistic }, opts).value;
}

/** The α/2 and 1 − α/2 nearest-rank quantiles of resampled values sorted ascending. */
export function percentileInterval(sorted: Float64Array, level: number, method: IntervalMethod): IntervalResult {
  const alpha = 1 - level;
  const low = nearestRankAt(sorted, alpha / 2);
  const high = nearestRankAt(sorted, 1 - alpha / 2);
  if (!Number.isFinite(low) || !Number.isFinite(high)) {
    let bad = 0;
    for (const v of sorted) if (!Number.isFinite(v)) bad++;
    return { reason: `unbounded: ${bad} of ${sorted.length} resamples had no finite value (e.g. nothing correct)` };
  }
  return labelDegenerate({ low, high, level, method }, sorted[0] === sorted[sorted.length - 1]);
}

/** A ratio statistic Σ count·num / Σ count·den (e.g. joules per weighted correct answer); den sum 0 → Infinity. */
export function ratioStatistic(num: ArrayLike<number>, den: ArrayLike<number>): ResampleStatistic {
  return (counts) => {
    let a = 0;
    let b = 0;
    for (let i = 0; i < counts.length; i++) {
      const c = counts[i]!;
      if (c === 0) continue;
      a += c * num[i]!;
      b += c * den[i]!;
    }
    return b === 0 ? Infinity : a / b;
  };
}

/** A mean statistic Σ count·value / Σ count. */
export function meanStatistic(values: ArrayLike<number>): ResampleStatistic {
  const ones = new Float64Array(values.length).fill(1);
  return ratioStatistic(values, ones);
}

/** Nearest-rank percentile statistics of sorted `values` grouped into units (`unitOf[j]`), without sorting per resample. */
export function percentileStatistics(values: ArrayLike<number>, unitOf: ArrayLike<number>, ps: readonly number[]): ResampleStatistic[] {
  const order = ps.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p);
  let cachedFor = -1;
  let cachedCounts: Uint32Array | null = null;
  let cached: number[] = [];
  // One walk over the sorted observations serves every percentile of one resample.
  const compute = (counts: Uint32Array): number[] => {
    let total = 0;
    for (let j = 0; j < values.length; j++) total += counts[unitOf[j]!]!;
    const res = ps.map(() => Infinity);
    if (total === 0) return res;
    let cum = 0;
    let next = 0;
    for (let j = 0; j < values.length && next < order.length; j++) {
      cum += counts[unitOf[j]!]!;
      while (next < order.length && cum >= Math.max(1, Math.ceil((order[next]!.p / 100) * total - 1e-9))) {
        res[order[next]!.i] = values[j]!;
        next++;
      }
    }
    return res;
  };
  return ps.map((_, i) => (counts: Uint32Array, resample: number) => {
    if (resample !== cachedFor || counts !== cachedCounts) {
      cached = compute(counts);
      cachedFor = resample;
      cachedCounts = counts;
    }
    return cached[i]!;
  });
}
