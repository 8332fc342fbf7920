/** How a family of p-values is corrected for multiple comparisons. */
export type PAdjust = 'holm' | 'none';

/** Holm's (1979) step-down p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1)·p₍ⱼ₎); `null` entries stay outside the family. */
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
