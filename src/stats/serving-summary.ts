/** Summary statistics as vLLM `bench serve` computes them (numpy: population sd, linear percentiles); `null` where vLLM writes 0. */

export interface Summary {
  mean: number | null;
  median: number | null;
  std: number | null;
  /** Keyed by the percentile as written (`"99"`, `"99.9"`). */
  percentiles: Record<string, number | null>;
}

/** Percentile `p` (0–100) of sorted values, linear interpolation (numpy `method="linear"`). */
export function percentileLinear(sorted: ArrayLike<number>, p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

export function summarize(values: ArrayLike<number>, percentiles: readonly number[]): Summary {
  const n = values.length;
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  const pct: Record<string, number | null> = {};
  for (const p of percentiles) pct[percentileName(p)] = round(percentileLinear(sorted, p));
  if (n === 0) return { mean: null, median: null, std: null, percentiles: pct };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  const mean = sum / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (sorted[i]! - mean) ** 2;
  return { mean: round(mean), median: round(percentileLinear(sorted, 50)), std: round(Math.sqrt(ss / n)), percentiles: pct };
}

/** How vLLM names a percentile in its result fields: `99` → `p99`, `99.9` → `p99.9`. */
export function percentileName(p: number): string {
  return String(p);
}

/** Three decimals (µs for ms figures): enough for any latency, stable in JSON. */
export function round(v: number | null, digits = 3): number | null {
  if (v === null || !Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
