import { checkLevel, labelDegenerate, type Interval, type IntervalResult } from './interval.js';
import { twoSidedZ } from './normal.js';

// Large-sample intervals over units (a case with all its passes is one cluster), used above the bootstrap's
// unit limit; the methods are in docs/statistics.md.

/** Per-unit values: an array, or a function of the unit (a figure derived from columns, without a copy). */
export type UnitValues = ArrayLike<number> | ((u: number) => number);

const reader = (v: UnitValues): ((u: number) => number) => (typeof v === 'function' ? v : (u) => v[u]!);

/**
 * R̂ = Σ y / Σ x and its linearised variance n/(n − 1) · Σ (y_u − R̂ x_u)² / (Σ x)² (Cochran 1977, §6.3–6.4);
 * null when Σ x is 0 or there are fewer than 2 units.
 */
export function ratioVariance(y: ArrayLike<number>, x: UnitValues): { ratio: number; variance: number } | null {
  const n = y.length;
  if (n < 2 || (typeof x !== 'function' && x.length !== n)) return null;
  const xu = reader(x);
  let sy = 0;
  let sx = 0;
  for (let u = 0; u < n; u++) {
    sy += y[u]!;
    sx += xu(u);
  }
  if (sx === 0) return null;
  const r = sy / sx;
  let ss = 0;
  for (let u = 0; u < n; u++) {
    const e = y[u]! - r * xu(u);
    ss += e * e;
  }
  return { ratio: r, variance: ((ss / (sx * sx)) * n) / (n - 1) };
}

/**
 * The delta-method interval R̂ ± z·√v(R̂); a reason instead when there is no ratio, or when non-negative data
 * give a low end below 0 (too few units with x > 0 for the normal approximation).
 */
export function ratioDeltaInterval(y: ArrayLike<number>, x: UnitValues, level: number): IntervalResult {
  checkLevel(level);
  if (y.length < 2) return { reason: `fewer than 2 units (${y.length})` };
  const v = ratioVariance(y, x);
  if (v === null) return { reason: 'nothing correct: the ratio has no finite value' };
  const half = twoSidedZ(level) * Math.sqrt(v.variance);
  const i: Interval = { low: v.ratio - half, high: v.ratio + half, level, method: 'delta' };
  if (i.low < 0 && v.ratio >= 0) {
    const xu = reader(x);
    let negative = false;
    let withX = 0;
    for (let u = 0; u < y.length; u++) {
      if (y[u]! < 0 || xu(u) < 0) negative = true;
      if (xu(u) > 0) withX++;
    }
    if (!negative) return { reason: `the large-sample (delta) interval reaches below 0: too few units with a correct answer (${withX}) for it` };
  }
  return labelDegenerate(i, half === 0);
}

/** The nearest-rank quantile of sorted values at probability t (clamped to the first and last value). */
export function nearestRankAt(sorted: ArrayLike<number>, t: number): number {
  const m = sorted.length;
  const rank = Math.min(m, Math.max(1, Math.ceil(t * m - 1e-9)));
  return sorted[rank - 1]!;
}

/**
 * A percentile's linearisation over units: e_u = a_u − F̂(q̂)·m_u (a_u the unit's observations ≤ q̂, m_u all
 * of them), so Var F̂(q̂) is {@link ratioVariance}'s n/(n − 1) · Σ e_u² / M².
 */
export interface QuantileLinearisation {
  q: number;
  /** F̂(q̂). */
  share: number;
  /** e_u per unit (0 for a unit with no observation); null when each observation is its own unit. */
  e: Float64Array | null;
  /** Σ e_u² */
  sumSquares: number;
  /** Var F̂(q̂), n / (n − 1) · Σ e_u² / M². */
  varianceOfShare: number;
}

/** `unitOf[j]`: the unit of the j-th sorted observation (null: each is its own); `units` counts units without one too. */
export function quantileLinearisation(sorted: ArrayLike<number>, unitOf: ArrayLike<number> | null, units: number, p: number): QuantileLinearisation {
  const m = sorted.length;
  const q = nearestRankAt(sorted, p / 100);
  let below = Math.min(m, Math.max(1, Math.ceil((p / 100) * m - 1e-9)));
  while (below < m && sorted[below] === q) below++;
  const share = below / m;
  let e: Float64Array | null = null;
  let ss = 0;
  if (unitOf === null) {
    // a_u − F̂·m_u is 1 − F̂ for the `below` observations at or under q̂, −F̂ for the rest, 0 for units without one.
    ss = below * (1 - share) ** 2 + (m - below) * share * share;
  } else {
    e = new Float64Array(units);
    for (let j = 0; j < m; j++) e[unitOf[j]!]! -= share;
    for (let j = 0; j < below; j++) e[unitOf[j]!]! += 1;
    for (let u = 0; u < units; u++) ss += e[u]! * e[u]!;
  }
  return { q, share, e, sumSquares: ss, varianceOfShare: units < 2 ? NaN : ((ss / (m * m)) * units) / (units - 1) };
}

function constant(sorted: ArrayLike<number>): boolean {
  return sorted.length > 0 && sorted[0] === sorted[sorted.length - 1];
}

/** Woodruff's (1952) percentile interval [F̂⁻¹(p − z·SE), F̂⁻¹(p + z·SE)], SE the unit-clustered one of {@link quantileLinearisation}. */
export function woodruffInterval(lin: QuantileLinearisation, sorted: ArrayLike<number>, p: number, level: number): IntervalResult {
  checkLevel(level);
  if (!(lin.varianceOfShare >= 0)) return { reason: 'fewer than 2 units' };
  const half = twoSidedZ(level) * Math.sqrt(lin.varianceOfShare);
  // Degenerate only over identical values: a zero SE at an extreme rank is the method's own, not the data's.
  return labelDegenerate({ low: nearestRankAt(sorted, p / 100 - half), high: nearestRankAt(sorted, p / 100 + half), level, method: 'woodruff' }, constant(sorted));
}

/** Woodruff intervals for several percentiles of the same observations (see {@link woodruffInterval}). */
export function woodruffIntervals(sorted: ArrayLike<number>, unitOf: ArrayLike<number> | null, units: number, ps: readonly number[], level: number): IntervalResult[] {
  return ps.map((p) => woodruffInterval(quantileLinearisation(sorted, unitOf, units, p), sorted, p, level));
}
