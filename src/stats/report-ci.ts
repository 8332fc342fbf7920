import { bootstrapCis, DEFAULT_BOOTSTRAP_MAX_UNITS, percentileStatistics, ratioStatistic, type ResampleStatistic } from './bootstrap.js';
import { isInterval, roundInterval, type Interval, type IntervalResult } from './interval.js';
import { ratioDeltaInterval, woodruffIntervals, type UnitValues } from './large-sample.js';
import { wilson } from './wilson.js';

/** The per-case figures a report's intervals are computed from (scored phase only, in run order). */
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

/** The figures that get an interval, in report order. */
export const CI_FIGURES = ['accuracy_pct', 'joules_per_correct', 'usd_per_correct', 'latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms'] as const;
export type CiFigure = (typeof CI_FIGURES)[number];

/** A report's `ci` block: one interval per figure (null with its reason in `reasons`), and how they were made. */
export type ReportCi = {
  level: number;
  /** Bootstrap resamples asked for (0: off; Wilson still applies); none are drawn when `analytic` is present. */
  resamples: number;
  /** The resampling unit: a case with all its scored passes, or a `--cluster` of cases. */
  unit: 'case' | ClusterBy;
  /** With a cluster unit: how many clusters were resampled. */
  clusters?: number;
  /** What seeds the resampling (the suite digest: same results, same intervals). */
  seed: 'suite-digest';
  reasons: Partial<Record<CiFigure, string>>;
  /** Present only above the bootstrap's unit limit: the intervals are large-sample ones (`delta`, `woodruff`). */
  analytic?: AnalyticSwitch;
} & Record<CiFigure, Interval | null>;

/** Why a report's (or a paired comparison's) intervals are large-sample ones, not bootstrapped. */
export interface AnalyticSwitch {
  /** Resampling units in the run (cases with a scored pass). */
  units: number;
  /** The limit they exceeded (`--bootstrap-max-units`). */
  bootstrap_max_units: number;
  reason: string;
}

/** What `--cluster` groups cases by (the `unit` column then carries cluster ids). */
export type ClusterBy = 'question' | 'subject';

export interface ReportCiOptions {
  /** The `unit` column holds cluster ids: accuracy too is resampled over clusters instead of Wilson's interval. */
  cluster?: ClusterBy;
  /** The suite digest (seed). */
  seed: string;
  /** 0 turns the bootstrap off (and the large-sample intervals with it: only Wilson remains). */
  resamples: number;
  /** The most units the bootstrap runs over (default {@link DEFAULT_BOOTSTRAP_MAX_UNITS}); above it, large-sample intervals. */
  maxUnits?: number;
  level?: number;
  /** Why the report's energy total is null (unknown energy, shared attribution); null when it is known. */
  joulesUnknown: string | null;
  /** Why the report's dollar total is null; null when it is known. */
  usdUnknown: string | null;
}

/** A report's intervals: Wilson for accuracy, a bootstrap over cases for the rest (above `maxUnits`: delta and Woodruff). */
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
  const clustered = opts.cluster !== undefined ? clusterCounts(cols) : null;

  const stats: Partial<Record<CiFigure, ResampleStatistic>> = {};
  const why = (f: CiFigure, reason: string) => (results[f] = { reason });
  const tooFew = scored < 2 ? `fewer than 2 scored cases (${scored})` : null;
  let timedCount = 0;
  for (const v of cols.latency_ms) if (!Number.isNaN(v)) timedCount++;
  // The dense units, per-unit sums and sorted latencies are built only when something is resampled.
  const maxUnits = opts.maxUnits ?? DEFAULT_BOOTSTRAP_MAX_UNITS;
  if (!(maxUnits >= 0)) throw new RangeError(`reportCi: maxUnits must be >= 0, got ${maxUnits}`);
  // The bootstrap's work is units × resamples; above the limit the intervals are large-sample ones.
  let analytic = false;
  let prep: Inputs | null = null;
  if (opts.resamples !== 0) {
    if (cols.unit.length > maxUnits && isIdentity(cols.unit)) {
      // One pass, cases in order (the usual big run): no unit numbering, no per-unit copies.
      analytic = true;
      prep = oneObservationEach(cols);
    } else {
      const dense = denseUnits(cols.unit);
      analytic = dense.units > maxUnits;
      prep = resamplingInputs(cols, dense);
    }
  }
  for (const [f, unknown, num] of [
    ['joules_per_correct', opts.joulesUnknown, prep?.J],
    ['usd_per_correct', opts.usdUnknown, prep?.usd],
  ] as const) {
    if (tooFew) why(f, tooFew);
    else if (unknown !== null) why(f, unknown);
    else if (prep === null || num === undefined) why(f, 'bootstrap off (--bootstrap 0)');
    else if (analytic) results[f] = ratioDeltaInterval(num, prep.wc, level);
    else stats[f] = ratioStatistic(num, prep.wc as Float64Array);
  }
  const ps = [50, 95, 99];
  const pct = prep === null || analytic ? null : percentileStatistics(prep.timed.values, prep.timed.units!, ps);
  const woodruff = prep !== null && analytic && timedCount >= 2 ? woodruffIntervals(prep.timed.values, prep.timed.units, prep.units, ps, level) : null;
  (['latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms'] as const).forEach((f, i) => {
    if (timedCount < 2) why(f, `fewer than 2 timed cases (${timedCount})`);
    else if (woodruff !== null) results[f] = woodruff[i]!;
    else if (pct === null) why(f, 'bootstrap off (--bootstrap 0)');
    else stats[f] = pct[i]!;
  });
  const units = prep?.units ?? 0;
  if (clustered) {
    if (scored < 2) why('accuracy_pct', `fewer than 2 scored cases (${scored})`);
    else if (opts.resamples === 0) why('accuracy_pct', 'bootstrap off (--bootstrap 0): no interval over clusters');
    else if (clustered.units < 2) why('accuracy_pct', `fewer than 2 clusters (${clustered.units})`);
    else if (analytic) {
      const d = ratioDeltaInterval(clustered.correct, clustered.scored, level);
      results.accuracy_pct = isInterval(d) ? { ...d, low: Math.max(0, d.low * 100), high: Math.min(100, d.high * 100) } : d;
    } else {
      const r = ratioStatistic(clustered.correct, clustered.scored);
      stats.accuracy_pct = (counts, resample) => 100 * r(counts, resample);
    }
  }
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
  return Object.assign(out, {
    level,
    resamples: opts.resamples,
    unit: opts.cluster ?? ('case' as const),
    ...(clustered ? { clusters: clustered.units } : {}),
    seed: 'suite-digest' as const,
    reasons,
    ...analyticSwitch(analytic, units, maxUnits, 'cases', LARGE_SAMPLE),
  });
}

const LARGE_SAMPLE = 'J/correct and $/correct have delta-method intervals, the latency percentiles Woodruff intervals, both over cases';

/** The `analytic` block when `on` (more `units` than `maxUnits`): `methods` says which large-sample intervals were made instead. */
export function analyticSwitch(on: boolean, units: number, maxUnits: number, what: string, methods: string): { analytic?: AnalyticSwitch } {
  if (!on) return {};
  const reason = `${units} ${what} are more than the bootstrap's limit of ${maxUnits} (--bootstrap-max-units): no resamples were drawn; ${methods}`;
  return { analytic: { units, bootstrap_max_units: maxUnits, reason } };
}

/** Per cluster (dense, in order of first appearance, as the bootstrap numbers units): correct and scored results. */
function clusterCounts(cols: CaseColumns): { units: number; correct: Float64Array; scored: Float64Array } {
  const { u, units } = denseUnits(cols.unit);
  const correct = new Float64Array(units);
  const scored = new Float64Array(units);
  for (let j = 0; j < u.length; j++) {
    const p = cols.passed[j]!;
    if (p >= 0) scored[u[j]!]! += 1;
    if (p === 1) correct[u[j]!]! += 1;
  }
  return { units, correct, scored };
}

/** What the intervals are computed from: per-unit sums, and the timed observations sorted by latency with their units. */
interface Inputs {
  units: number;
  J: ArrayLike<number>;
  usd: ArrayLike<number>;
  /** Weighted correct count per unit (an array for the bootstrap). */
  wc: UnitValues;
  /** `units` null: each observation is a unit of its own. */
  timed: { values: ArrayLike<number>; units: Uint32Array | null };
}

/** Whether unit j is j for every observation (one pass, in case order). */
function isIdentity(unit: ArrayLike<number>): boolean {
  for (let j = 0; j < unit.length; j++) if (unit[j] !== j) return false;
  return true;
}

/** The large-sample intervals' inputs when each observation is its own unit: the columns themselves, latencies sorted. */
function oneObservationEach(cols: CaseColumns): Inputs {
  const { passed, weight } = cols;
  return { units: cols.unit.length, J: cols.joules, usd: cols.usd, wc: (u) => (passed[u] === 1 ? weight[u]! : 0), timed: { values: sortedTimed(cols.latency_ms), units: null } };
}

/** Dense units (a case with all its passes), per-unit sums for the ratio statistics, and the timed cases sorted by latency. */
function resamplingInputs(cols: CaseColumns, dense: { u: Uint32Array; units: number }): Inputs & { wc: Float64Array } {
  const { u, units } = dense;
  // One observation a unit, in order: the per-unit sums are the columns themselves, not two more copies.
  const own = units === u.length && u.every((k, j) => k === j);
  const J = own ? cols.joules : new Float64Array(units);
  const usd = own ? cols.usd : new Float64Array(units);
  const wc = new Float64Array(units);
  for (let j = 0; j < u.length; j++) {
    const k = u[j]!;
    if (!own) {
      (J as Float64Array)[k]! += cols.joules[j]!;
      (usd as Float64Array)[k]! += cols.usd[j]!;
    }
    if (cols.passed[j] === 1) wc[k]! += cols.weight[j]!;
  }
  return { units, J, usd, wc, timed: timedByLatency(cols.latency_ms, u) };
}

/** The latencies that are not NaN, ascending: 32-bit when all are whole milliseconds below 2^32 (they are, from a run). */
function sortedTimed(latency: ArrayLike<number>): Uint32Array | Float64Array {
  let m = 0;
  let whole = true;
  for (let j = 0; j < latency.length; j++) {
    const v = latency[j]!;
    if (Number.isNaN(v)) continue;
    m++;
    if (!(Number.isInteger(v) && v >= 0 && v < 2 ** 32) || Object.is(v, -0)) whole = false;
  }
  const out = whole ? new Uint32Array(m) : new Float64Array(m);
  for (let j = 0, i = 0; j < latency.length; j++) if (!Number.isNaN(latency[j]!)) out[i++] = latency[j]!;
  return out.sort();
}

/** Each observation's unit, numbered densely in order of first appearance (a lookup table for case indexes, else a Map). */
export function denseUnits(unit: ArrayLike<number>): { u: Uint32Array; units: number } {
  const n = unit.length;
  const u = new Uint32Array(n);
  let max = -1;
  for (let j = 0; j < n; j++) {
    const x = unit[j]!;
    if (!(Number.isInteger(x) && x >= 0 && x < 4 * n + 1024)) {
      max = -2;
      break;
    }
    if (x > max) max = x;
  }
  let units = 0;
  if (max >= -1) {
    const table = new Int32Array(max + 1).fill(-1);
    for (let j = 0; j < n; j++) {
      let i = table[unit[j]!]!;
      if (i < 0) table[unit[j]!] = i = units++;
      u[j] = i;
    }
    return { u, units };
  }
  const index = new Map<number, number>();
  for (let j = 0; j < n; j++) {
    let i = index.get(unit[j]!);
    if (i === undefined) index.set(unit[j]!, (i = index.size));
    u[j] = i;
  }
  return { u, units: index.size };
}

/** Timed observations by latency (ties in order) with their units; whole ms sort as packed keys latency · 2^bits + position. */
export function timedByLatency(latency: ArrayLike<number>, u: Uint32Array): { values: Float64Array; units: Uint32Array } {
  const n = latency.length;
  let m = 0;
  for (let j = 0; j < n; j++) if (!Number.isNaN(latency[j]!)) m++;
  const order = new Uint32Array(m);
  const bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
  const limit = 2 ** (53 - bits);
  let packable = true;
  for (let j = 0, i = 0; j < n; j++) {
    const v = latency[j]!;
    if (Number.isNaN(v)) continue;
    order[i++] = j;
    if (!(Number.isInteger(v) && v >= 0 && v < limit)) packable = false;
  }
  if (packable) {
    const keys = new Float64Array(m);
    const shift = 2 ** bits;
    for (let i = 0; i < m; i++) keys[i] = latency[order[i]!]! * shift + order[i]!;
    keys.sort();
    for (let i = 0; i < m; i++) order[i] = keys[i]! % shift;
  } else {
    const sorted = Array.from(order).sort((a, b) => latency[a]! - latency[b]! || a - b);
    order.set(sorted);
  }
  const values = new Float64Array(m);
  const units = new Uint32Array(m);
  for (let i = 0; i < m; i++) {
    values[i] = latency[order[i]!]!;
    units[i] = u[order[i]!]!;
  }
  return { values, units };
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
