/**
 * Nearest-rank percentile (no interpolation): the smallest observed value with at least p% of the
 * values at or below it, so the answer is always an observed value. `null` for no values.
 * `p` in (0, 100].
 */
export function nearestRank(values: readonly number[], p: number): number | null {
  return nearestRankSorted([...values].sort((a, b) => a - b), p);
}

/** `nearestRank` over values already sorted ascending (no copy, no sort). */
export function nearestRankSorted(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  // Rank n = ceil(p/100 × N), 1-based. The epsilon guards 0.95*20 = 19.000000000000004.
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length - 1e-9));
  return sorted[rank - 1] ?? null;
}

/** Median of the values (mean of the middle two for an even count); `null` for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Rounds to `digits` decimals so that float noise does not leak into byte-compared reports. */
export function round(value: number, digits = 6): number {
  const f = 10 ** digits;
  const r = Math.round(value * f) / f;
  return Object.is(r, -0) ? 0 : r;
}

/** `(cand − base) × 100 / base`; `null` when either is not finite or the base is 0. */
export function pctChange(base: number | null, cand: number | null): number | null {
  if (base === null || cand === null || !Number.isFinite(base) || !Number.isFinite(cand)) return null;
  // 0 → 0 is no change; from 0 to anything else there is no percentage.
  if (base === 0) return cand === 0 ? 0 : null;
  return ((cand - base) * 100) / base;
}
