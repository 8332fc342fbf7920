import { bootstrapCis, percentileStatistics, ratioStatistic, type ResampleStatistic } from './bootstrap.js';
import { isInterval, roundInterval, type Interval, type IntervalResult } from './interval.js';
import { wilson } from './wilson.js';

/**
 * The per-case figures a report's intervals are computed from (scored phase only, in run order): one
 * compact column of numbers each (a typed array of exactly the cases' length, or a plain array).
 */
export interface CaseColumns {
  /** The case's position in the suite: passes of one case form one resampling unit. */
  unit: Column;
  /** The scored pass (0-based). */
  pass: Column;
  /** 1 correct, 0 wrong, -1 unscored (`expected: null` or not scored). */
  passed: Column;
  /** The case's per-correct weight. */
  weight: Column;
  /** NaN where unknown. */
  joules: Column;
  /** NaN where unknown. */
  usd: Column;
  /** Whole milliseconds as the report's percentiles use them; NaN for a case that failed at the target. */
  latency_ms: Column;
}

/** A column of numbers, read by index. */
export type Column = ArrayLike<number> & Iterable<number>;

export function emptyColumns(): CaseColumns {
  return { unit: [], pass: [], passed: [], weight: [], joules: [], usd: [], latency_ms: [] };
}

/** The figures that get an interval, in report order. */
export const CI_FIGURES = ['accuracy_pct', 'joules_per_correct', 'usd_per_correct', 'latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms'] as const;
export type CiFigure = (typeof CI_FIGURES)[number];

/**
 * A report's `ci` block: one interval per figure (null with its reason in `reasons` when none could be
 * computed), the level, the resample count and what was resampled.
 */
export type ReportCi = {
  level: number;
  /** Bootstrap resamples drawn (0: bootstrap off; Wilson still applies). */
  resamples: number;
  /** The resampling unit: a case, with all its scored passes. */
  unit: 'case';
  /** What seeds the resampling (the suite digest: same results, same intervals). */
  seed: 'suite-digest';
  reasons: Partial<Record<CiFigure, string>>;
} & Record<CiFigure, Interval | null>;

export interface ReportCiOptions {
  /** The suite digest (seed). */
  seed: string;
  /** 0 turns the bootstrap off. */
  resamples: number;
  level?: number;
  /** Why the report's energy total is null (unknown energy, shared attribution); null when it is known. */
  joulesUnknown: string | null;
  /** Why the report's dollar total is null; null when it is known. */
  usdUnknown: string | null;
}

/**
 * Intervals for a report (pure and deterministic). Accuracy: Wilson over scored cases. J/correct,
 * $/correct and the latency percentiles: a percentile bootstrap over cases, each case carrying its
 * weight, joules, dollars and latency into every resample (so weighted suites bootstrap their weights).
 */
export function reportCi(cols: CaseColumns, opts: ReportCiOptions): ReportCi {
  const level = opts.level ?? 0.95;
  const results: Partial<Record<CiFigure, IntervalResult>> = {};
  let scored = 0;
  let correct = 0;
  for (const p of cols.passed) {
    if (p >= 0) scored++;
    if (p === 1) correct++;
  }
  const acc = wilson(correct, scored, level);
  results.accuracy_pct = isInterval(acc) ? { ...acc, low: acc.low * 100, high: acc.high * 100 } : acc;

  const stats: Partial<Record<CiFigure, ResampleStatistic>> = {};
  const why = (f: CiFigure, reason: string) => (results[f] = { reason });
  const tooFew = scored < 2 ? `fewer than 2 scored cases (${scored})` : null;
  let timedCount = 0;
  for (const v of cols.latency_ms) if (!Number.isNaN(v)) timedCount++;
  // With the bootstrap off nothing below is resampled: the dense units, per-unit sums and the sorted
  // latencies (an object a case) are built only for the bootstrap (≈ 0.5 µs a case, `npm run bench`).
  const prep = opts.resamples === 0 ? null : resamplingInputs(cols);
  for (const [f, unknown, num] of [
    ['joules_per_correct', opts.joulesUnknown, prep?.J],
    ['usd_per_correct', opts.usdUnknown, prep?.usd],
  ] as const) {
    if (tooFew) why(f, tooFew);
    else if (unknown !== null) why(f, unknown);
    else if (prep === null || num === undefined) why(f, 'bootstrap off (--bootstrap 0)');
    else stats[f] = ratioStatistic(num, prep.wc);
  }
  const pct = prep === null ? null : percentileStatistics(prep.timed.map((x) => x.v), prep.timed.map((x) => x.k), [50, 95, 99]);
  (['latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms'] as const).forEach((f, i) => {
    if (timedCount < 2) why(f, `fewer than 2 timed cases (${timedCount})`);
    else if (pct === null) why(f, 'bootstrap off (--bootstrap 0)');
    else stats[f] = pct[i]!;
  });
  const units = prep?.units ?? 0;
  if (Object.keys(stats).length > 0) Object.assign(results, bootstrapCis(units, stats as Record<CiFigure, ResampleStatistic>, { seed: opts.seed, resamples: opts.resamples, level }));

  const out = {} as ReportCi;
  const reasons: ReportCi['reasons'] = {};
  for (const f of CI_FIGURES) {
    const r = results[f]!;
    if (isInterval(r)) out[f] = roundInterval(r, DIGITS[f]);
    else {
      out[f] = null;
      reasons[f] = r.reason;
    }
  }
  return Object.assign(out, { level, resamples: opts.resamples, unit: 'case' as const, seed: 'suite-digest' as const, reasons });
}

/** Dense units (a case with all its passes), per-unit sums for the ratio statistics, and the timed cases sorted by latency. */
function resamplingInputs(cols: CaseColumns): { units: number; J: Float64Array; usd: Float64Array; wc: Float64Array; timed: { k: number; v: number }[] } {
  const unitIndex = new Map<number, number>();
  const u = Array.from(cols.unit, (x) => {
    let i = unitIndex.get(x);
    if (i === undefined) unitIndex.set(x, (i = unitIndex.size));
    return i;
  });
  const units = unitIndex.size;
  const J = new Float64Array(units);
  const usd = new Float64Array(units);
  const wc = new Float64Array(units);
  for (let j = 0; j < u.length; j++) {
    const k = u[j]!;
    J[k]! += cols.joules[j]!;
    usd[k]! += cols.usd[j]!;
    if (cols.passed[j] === 1) wc[k]! += cols.weight[j]!;
  }
  const timed = u.map((k, j) => ({ k, v: cols.latency_ms[j]! })).filter((x) => !Number.isNaN(x.v)).sort((a, b) => a.v - b.v);
  return { units, J, usd, wc, timed };
}

/** Decimals kept, as for the point figures. */
const DIGITS: Record<CiFigure, number> = {
  accuracy_pct: 4,
  joules_per_correct: 6,
  usd_per_correct: 9,
  latency_p50_ms: 3,
  latency_p95_ms: 3,
  latency_p99_ms: 3,
};
