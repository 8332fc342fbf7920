import { bootstrapCis, DEFAULT_BOOTSTRAP_MAX_UNITS, percentileStatistics, type ResampleStatistic } from './bootstrap.js';
import { checkLevel, isInterval, labelDegenerate, roundInterval, type Interval, type IntervalResult } from './interval.js';
import { nearestRankAt, quantileLinearisation, ratioVariance, woodruffInterval } from './large-sample.js';
import { twoSidedZ } from './normal.js';
import { nearestRankSorted } from '../core/stats.js';
import { mcnemar, type McNemarResult } from './mcnemar.js';
import { analyticSwitch, denseUnits, timedByLatency, type AnalyticSwitch } from './report-ci.js';
import { KeyTable, PAIRED_FLAGS, PairedColumns } from './paired-columns.js';

/** One scored case result of one run, as a paired comparison needs it. */
export interface PairedCase {
  /** Pairs results across runs: the case's suite position and pass (`"pass:index"`). */
  key: string;
  /** The resampling unit (the case's suite position): passes of one case are drawn together. */
  unit: number;
  passed: boolean | null;
  weight: number;
  joules: number | null;
  usd: number | null;
  /** Whole ms as the report's percentiles use them; null when the case failed at the target. */
  latency_ms: number | null;
}

export interface PairedOptions {
  /** Seed (the shared suite digest). */
  seed: string;
  resamples?: number;
  /** The most paired cases the bootstrap runs over (default {@link DEFAULT_BOOTSTRAP_MAX_UNITS}); above it, large-sample intervals. */
  maxUnits?: number;
  /** Significance level (default 0.05); the intervals it judges by have level 1 − alpha. */
  alpha?: number;
  /** Whether joules can be compared (same energy source on both sides); false withholds the ratio. */
  energyComparable?: boolean;
}

/** A paired figure: its point value, the 95 % interval, the (1 − alpha) interval and the verdict. */
export interface PairedFigure {
  value: number | null;
  ci95: Interval | null;
  /** The interval at level 1 − alpha (the same as ci95 at alpha 0.05). */
  ci_alpha: Interval | null;
  /** True when the (1 − alpha) interval excludes "no change" (or McNemar's p < alpha for accuracy); null when unknown. */
  significant: boolean | null;
  reason?: string;
}

export interface PairedComparison {
  alpha: number;
  resamples: number;
  /** Results present in both runs (matched by pass and suite position). */
  pairs: number;
  /** Results of one run with no partner in the other. */
  unpaired: { baseline: number; candidate: number };
  /** Candidate − baseline accuracy in points over pairs scored on both sides. */
  accuracy_pp_delta: PairedFigure & { mcnemar: McNemarResult | null };
  /** (candidate J/correct) / (baseline J/correct); < 1 is better. */
  joules_per_correct_ratio: PairedFigure;
  /** (candidate $/correct) / (baseline $/correct), bootstrapped as the J/correct ratio is; < 1 is better. */
  usd_per_correct_ratio: PairedFigure;
  /** (candidate Σ $) / (baseline Σ $) over the paired results; < 1 is better. */
  total_usd_ratio: PairedFigure;
  /** Candidate p95 − baseline p95, ms; negative is better. */
  latency_p95_ms_delta: PairedFigure;
  /** Present only above the bootstrap's unit limit: large-sample paired intervals (`paired-delta`, `paired-woodruff`). */
  analytic?: AnalyticSwitch;
}

/**
 * Compares two runs case by case: accuracy by exact McNemar, the ratios and the p95 difference by a paired
 * bootstrap (both runs' results of each drawn case taken together); docs/statistics.md.
 */
export function pairedComparison(baseline: readonly PairedCase[] | PairedColumns, candidate: readonly PairedCase[] | PairedColumns, opts: PairedOptions): PairedComparison {
  const alpha = opts.alpha ?? 0.05;
  checkLevel(1 - alpha);
  const resamples = opts.resamples ?? 2000;
  // Cases given as objects are put into columns; key strings number alike on both sides.
  const keys = new KeyTable();
  const B = baseline instanceof PairedColumns ? baseline : PairedColumns.of(baseline, keys);
  const C = candidate instanceof PairedColumns ? candidate : PairedColumns.of(candidate, keys);
  // Pairs in baseline order, each with the candidate's last result of the same key.
  const { pb, pc } = matchPairs(B, C);
  const P = pb.length;
  const unpaired = { baseline: B.length - P, candidate: C.length - P };

  // Units: the suite positions of paired results (dense, numbered as they first appear).
  const bUnit = B.unit.view();
  const { u: unitOf, units: U } = denseUnits(Float64Array.from(pb, (r) => bUnit[r]!));

  // Accuracy: pairs scored on both sides.
  let both = 0;
  let bOnly = 0;
  let cOnly = 0;
  // Whole numbers (passes of a case), held exactly in 4 bytes a unit.
  const accDiff = new Int32Array(U);
  const accN = new Uint32Array(U);
  for (let j = 0; j < P; j++) {
    const fb = B.flags(pb[j]!) & PAIRED_FLAGS.PASSED_MASK;
    const fc = C.flags(pc[j]!) & PAIRED_FLAGS.PASSED_MASK;
    if (fb === 0 || fc === 0) continue;
    const bPassed = fb === 2;
    const cPassed = fc === 2;
    both++;
    if (bPassed && !cPassed) bOnly++;
    if (cPassed && !bPassed) cOnly++;
    accDiff[unitOf[j]!]! += (cPassed ? 1 : 0) - (bPassed ? 1 : 0);
    accN[unitOf[j]!]! += 1;
  }

  // Joules, dollars, weighted correct answers and paired results: per-unit sums for each side (an unknown
  // figure is held as 0, as `?? 0` added it).
  const unknown = (mask: number): boolean => {
    if (P === 0) return true;
    for (let j = 0; j < P; j++) if ((B.flags(pb[j]!) | C.flags(pc[j]!)) & mask) return true;
    return false;
  };
  const side = (X: PairedColumns) => ({ X, J: X.joules.view(), $: X.usd.view(), W: X.weight.view(), j: new Float64Array(U), usd: new Float64Array(U), w: new Float64Array(U), n: new Float64Array(U) });
  const sb = side(B);
  const sc = side(C);
  const add = (s: ReturnType<typeof side>, r: number, u: number): void => {
    s.j[u]! += s.J[r]!;
    s.usd[u]! += s.$[r]!;
    s.n[u]! += 1;
    if ((s.X.flags(r) & PAIRED_FLAGS.PASSED_MASK) === 2) s.w[u]! += s.W[r]!;
  };
  for (let j = 0; j < P; j++) {
    add(sb, pb[j]!, unitOf[j]!);
    add(sc, pc[j]!, unitOf[j]!);
  }
  // (Σ cand num / Σ cand den) / (Σ base num / Σ base den) over the drawn units: J/correct and $/correct with
  // weighted correct answers as the denominator; total $ with the paired results (the same on both sides).
  interface RatioParts { nc: Float64Array; dc: Float64Array; nb: Float64Array; db: Float64Array }
  const ratioOf = (q: RatioParts, counts: Uint32Array | null): number => {
    let a = 0, b2 = 0, c = 0, d = 0;
    for (let u = 0; u < U; u++) {
      const k = counts ? counts[u]! : 1;
      if (k === 0) continue;
      a += k * q.nc[u]!;
      b2 += k * q.dc[u]!;
      c += k * q.nb[u]!;
      d += k * q.db[u]!;
    }
    if (b2 === 0 || d === 0 || c === 0) return Infinity;
    return a / b2 / (c / d);
  };
  const RATIOS = {
    ratio: { parts: { nc: sc.j, dc: sc.w, nb: sb.j, db: sb.w }, unknown: !(opts.energyComparable !== false) ? 'energy measured by different sources: not comparable' : unknown(PAIRED_FLAGS.JOULES_NULL) ? 'energy unknown for some paired cases' : null, scored: true, zero: 'nothing correct (or no energy) on one side' },
    usd: { parts: { nc: sc.usd, dc: sc.w, nb: sb.usd, db: sb.w }, unknown: unknown(PAIRED_FLAGS.USD_NULL) ? 'cost unknown for some paired cases' : null, scored: true, zero: 'nothing correct (or no cost) on one side' },
    total_usd: { parts: { nc: sc.usd, dc: sc.n, nb: sb.usd, db: sb.n }, unknown: unknown(PAIRED_FLAGS.USD_NULL) ? 'cost unknown for some paired cases' : null, scored: false, zero: 'no cost on one side' },
  } satisfies Record<string, { parts: RatioParts; unknown: string | null; scored: boolean; zero: string }>;
  type RatioKey = keyof typeof RATIOS;
  const RATIO_KEYS = Object.keys(RATIOS) as RatioKey[];

  // Latency: each side's timed results sorted (ties in pair order), with their units.
  const tb = sortedTimes(B, pb, unitOf);
  const tc = sortedTimes(C, pc, unitOf);
  const [p95b] = percentileStatistics(tb.values, tb.units, [95]);
  const [p95c] = percentileStatistics(tc.values, tc.units, [95]);

  const stats: Record<string, ResampleStatistic> = {};
  const reasons: Record<string, string> = {};
  if (both < 2) reasons.acc = `fewer than 2 cases scored in both runs (${both})`;
  else if (resamples === 0) reasons.acc = 'bootstrap off (--bootstrap 0)';
  else
    stats.acc = (counts) => {
      let d = 0, n = 0;
      for (let u = 0; u < U; u++) {
        const k = counts[u]!;
        if (k === 0) continue;
        d += k * accDiff[u]!;
        n += k * accN[u]!;
      }
      return n === 0 ? 0 : (d * 100) / n;
    };
  const points = {} as Record<RatioKey, number | null>;
  for (const key of RATIO_KEYS) {
    const r = RATIOS[key];
    const point = r.unknown === null ? ratioOf(r.parts, null) : null;
    points[key] = point !== null && Number.isFinite(point) ? point : null;
    if (r.unknown !== null) reasons[key] = r.unknown;
    else if (r.scored ? both < 2 : P < 2) reasons[key] = r.scored ? `fewer than 2 cases scored in both runs (${both})` : `fewer than 2 paired cases (${P})`;
    else if (points[key] === null) reasons[key] = r.zero;
    else if (resamples === 0) reasons[key] = 'bootstrap off (--bootstrap 0)';
    else stats[key] = (counts) => ratioOf(r.parts, counts);
  }
  if (tb.values.length < 2 || tc.values.length < 2) reasons.p95 = 'fewer than 2 timed cases on a side';
  else if (resamples === 0) reasons.p95 = 'bootstrap off (--bootstrap 0)';
  else
    stats.p95 = (counts, r) => {
      const c = p95c!(counts, r);
      const b = p95b!(counts, r);
      return Number.isFinite(c) && Number.isFinite(b) ? c - b : Infinity;
    };

  const maxUnits = opts.maxUnits ?? DEFAULT_BOOTSTRAP_MAX_UNITS;
  if (!(maxUnits >= 0)) throw new RangeError(`pairedComparison: maxUnits must be >= 0, got ${maxUnits}`);
  // The bootstrap's work is units × resamples (the p95 statistic walks every timed result per resample).
  const analytic = resamples > 0 && U > maxUnits && Object.keys(stats).length > 0;
  const large = analytic
    ? {
        acc: stats.acc ? () => ratioVariance(accDiff, accN) : null,
        p95: stats.p95 ? pairedQuantileParts(tb, tc, U, 95) : null,
      }
    : null;
  const run = (level: number): Record<string, IntervalResult> => {
    if (Object.keys(stats).length === 0) return {};
    if (!large) return bootstrapCis(U, stats, { seed: opts.seed, resamples, level, method: 'paired-bootstrap' });
    const out: Record<string, IntervalResult> = {};
    const z = twoSidedZ(level);
    const acc = large.acc?.();
    if (acc) out.acc = labelDegenerate({ low: (acc.ratio - z * Math.sqrt(acc.variance)) * 100, high: (acc.ratio + z * Math.sqrt(acc.variance)) * 100, level, method: 'paired-delta' }, acc.variance === 0);
    else if (acc === null) out.acc = { reason: 'fewer than 2 cases scored in both runs' };
    for (const key of RATIO_KEYS) {
      if (!stats[key]) continue;
      const { nc, dc, nb, db } = RATIOS[key].parts;
      const ratio = ratioOfRatiosVariance(nc, dc, nb, db);
      if (ratio === null) out[key] = { reason: RATIOS[key].zero };
      else {
        const half = z * ratio.ratio * Math.sqrt(ratio.relVariance);
        out[key] =
          ratio.ratio - half > 0
            ? labelDegenerate({ low: ratio.ratio - half, high: ratio.ratio + half, level, method: 'paired-delta' }, half === 0)
            : { reason: 'the large-sample (delta) interval of the ratio reaches 0 or below: too few correct answers for it' };
      }
    }
    if (large.p95) out.p95 = pairedQuantileInterval(large.p95, level);
    return out;
  };
  const at95 = run(0.95);
  const atAlpha = Math.abs(alpha - 0.05) < 1e-12 ? at95 : run(1 - alpha);

  const figure = (key: string, value: number | null, nullValue: number, digits: number): PairedFigure => {
    const i95 = at95[key];
    const ia = atAlpha[key];
    const reason = reasons[key] ?? (i95 && !isInterval(i95) ? i95.reason : undefined);
    const ci95 = i95 && isInterval(i95) ? roundInterval(i95, digits) : null;
    const ci_alpha = ia && isInterval(ia) ? roundInterval(ia, digits) : null;
    return {
      value: value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits,
      ci95,
      ci_alpha,
      significant: ci_alpha ? ci_alpha.low > nullValue || ci_alpha.high < nullValue : null,
      ...(reason ? { reason } : {}),
    };
  };

  // Candidate − baseline correct answers: the discordant pairs' difference.
  const accValue = both === 0 ? null : ((cOnly - bOnly) * 100) / both;
  const mc = both === 0 ? null : mcnemar(bOnly, cOnly);
  const acc = figure('acc', accValue, 0, 4);
  const p95Base = nearestRankSorted(tb.values, 95);
  const p95Cand = nearestRankSorted(tc.values, 95);
  return {
    alpha,
    resamples,
    pairs: P,
    unpaired,
    accuracy_pp_delta: { ...acc, significant: mc ? mc.p_value < alpha : null, mcnemar: mc },
    joules_per_correct_ratio: figure('ratio', points.ratio, 1, 6),
    usd_per_correct_ratio: figure('usd', points.usd, 1, 6),
    total_usd_ratio: figure('total_usd', points.total_usd, 1, 6),
    latency_p95_ms_delta: figure('p95', p95Base === null || p95Cand === null ? null : p95Cand - p95Base, 0, 3),
    ...analyticSwitch(analytic, U, maxUnits, 'paired cases', PAIRED_LARGE_SAMPLE),
  };
}

const PAIRED_LARGE_SAMPLE =
  'the accuracy difference and the J/correct and $ ratios have paired delta-method intervals, the p95 difference a paired Woodruff one, all over cases';

/** R̂ = (Σ jc / Σ wc) / (Σ jb / Σ wb) and Var(R̂)/R̂² ≈ n/(n − 1) · Σ z_u² (delta method on log R̂); null when a total is 0. */
function ratioOfRatiosVariance(jc: Float64Array, wc: Float64Array, jb: Float64Array, wb: Float64Array): { ratio: number; relVariance: number } | null {
  const n = jc.length;
  let a = 0, b = 0, c = 0, d = 0;
  for (let u = 0; u < n; u++) {
    a += jc[u]!;
    b += wc[u]!;
    c += jb[u]!;
    d += wb[u]!;
  }
  if (a === 0 || b === 0 || c === 0 || d === 0 || n < 2) return null;
  let ss = 0;
  for (let u = 0; u < n; u++) {
    const z = jc[u]! / a - wc[u]! / b - jb[u]! / c + wb[u]! / d;
    ss += z * z;
  }
  return { ratio: a / b / (c / d), relVariance: (ss * n) / (n - 1) };
}

/** Each side's p-th percentile linearised over the same units, and the correlation of the two. */
function pairedQuantileParts(tb: SortedTimes, tc: SortedTimes, units: number, p: number) {
  const b = quantileLinearisation(tb.values, tb.units, units, p);
  const c = quantileLinearisation(tc.values, tc.units, units, p);
  let cross = 0;
  for (let u = 0; u < units; u++) cross += b.e![u]! * c.e![u]!;
  const denom = Math.sqrt(b.sumSquares * c.sumSquares);
  return { b, c, tb, tc, p, rho: denom === 0 ? 0 : cross / denom };
}

/** Candidate − baseline percentile: d ± z·√(SEc² + SEb² − 2ρ·SEc·SEb), each SE from its Woodruff interval (Sitter & Wu 2001). */
function pairedQuantileInterval(parts: ReturnType<typeof pairedQuantileParts>, level: number): IntervalResult {
  const z = twoSidedZ(level);
  const wb = woodruffInterval(parts.b, parts.tb.values, parts.p, level);
  const wc = woodruffInterval(parts.c, parts.tc.values, parts.p, level);
  if (!isInterval(wb)) return wb;
  if (!isInterval(wc)) return wc;
  const seB = (wb.high - wb.low) / (2 * z);
  const seC = (wc.high - wc.low) / (2 * z);
  const se = Math.sqrt(Math.max(0, seC * seC + seB * seB - 2 * parts.rho * seC * seB));
  const d = nearestRankAt(parts.tc.values, parts.p / 100) - nearestRankAt(parts.tb.values, parts.p / 100);
  return labelDegenerate({ low: d - z * se, high: d + z * se, level, method: 'paired-woodruff' }, wb.method === 'degenerate' && wc.method === 'degenerate');
}

/** Each baseline row (in order) with the candidate's row of the same key, the last one when a key repeats. */
function matchPairs(B: PairedColumns, C: PairedColumns): { pb: Uint32Array; pc: Uint32Array } {
  const ck = C.key.view();
  const n = ck.length;
  let increasing = true;
  for (let i = 1; i < n && increasing; i++) if (!(ck[i - 1]! < ck[i]!)) increasing = false;
  let sortedKeys: ArrayLike<number> = ck;
  let sortedRows: Uint32Array | null = null;
  if (!increasing) {
    const perm = new Uint32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    perm.sort((a, b) => ck[a]! - ck[b]! || a - b);
    const k2 = new Float64Array(n);
    const r2 = new Uint32Array(n);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const r = perm[i]!;
      const k = ck[r]!;
      if (m > 0 && k2[m - 1] === k) r2[m - 1] = r;
      else {
        k2[m] = k;
        r2[m++] = r;
      }
    }
    sortedKeys = k2.subarray(0, m);
    sortedRows = r2.subarray(0, m);
  }
  const bk = B.key.view();
  const nb = bk.length;
  const m = sortedKeys.length;
  const pb = new Uint32Array(nb);
  const pc = new Uint32Array(nb);
  let pairs = 0;
  let next = 0;
  for (let j = 0; j < nb; j++) {
    const k = bk[j]!;
    // The next key is where the last match was followed (both files in case order): no search then.
    const at = next < m && sortedKeys[next] === k ? next : searchSorted(sortedKeys, k);
    if (at < 0) continue;
    pb[pairs] = j;
    pc[pairs++] = sortedRows === null ? at : sortedRows[at]!;
    next = at + 1;
  }
  return { pb: pb.subarray(0, pairs), pc: pc.subarray(0, pairs) };
}

/** Where `k` is in ascending `sorted`, or -1. */
function searchSorted(sorted: ArrayLike<number>, k: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v < k) lo = mid + 1;
    else if (v > k) hi = mid - 1;
    else return mid;
  }
  return -1;
}

type SortedTimes = ReturnType<typeof timedByLatency>;

/** One side's timed results (of `rows`, the side's row of each pair), ascending, ties in pair order, with their units. */
function sortedTimes(side: PairedColumns, rows: Uint32Array, unitOf: Uint32Array): SortedTimes {
  const lat = side.latency_ms.view();
  return timedByLatency(Float64Array.from(rows, (r) => (side.flags(r) & PAIRED_FLAGS.LATENCY_NULL ? NaN : lat[r]!)), unitOf);
}
