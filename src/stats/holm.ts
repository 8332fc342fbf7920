/** How a family of p-values is corrected for multiple comparisons. */
export type PAdjust = 'holm' | 'none';

/**
 * Holm's step-down adjusted p-values (Holm 1979): with the m known p-values sorted ascending,
 * p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1)·p₍ⱼ₎). Rejecting where p̃ < α controls the family-wise error rate
 * at α. `null` entries (no test) are not in the family and stay `null`; ties keep input order.
 */
export function holmAdjust(pValues: readonly (number | null)[]): (number | null)[] {
  for (const p of pValues) {
    if (p !== null && !(p >= 0 && p <= 1)) throw new RangeError(`holmAdjust: p-values must be in [0, 1], got ${p}`);
  }
  const idx = pValues.map((p, i) => ({ p, i })).filter((x): x is { p: number; i: number } => x.p !== null);
  idx.sort((a, b) => a.p - b.p || a.i - b.i);
  const m = idx.length;
  const out: (number | null)[] = pValues.map(() => null);
  let running = 0;
  idx.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    out[i] = running;
  });
  return out;
}

/** `adjust`'s p-values: Holm's, or the raw ones unchanged. */
export function adjustPValues(pValues: readonly (number | null)[], adjust: PAdjust): (number | null)[] {
  return adjust === 'holm' ? holmAdjust(pValues) : [...pValues];
}
