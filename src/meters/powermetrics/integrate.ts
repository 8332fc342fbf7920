/** A sample placed on the meter's clock: it covers `[end_ms − elapsed_ms, end_ms]`. */
export interface TimedSample {
  end_ms: number;
  elapsed_ms: number;
  watts: Record<string, number>;
}

/** Energy over `[t0, t1]` from average-power samples, J per domain, and how many ms of it the samples covered. */
export function integrateSamples(samples: readonly TimedSample[], t0: number, t1: number): { by_domain_j: Record<string, number>; covered_ms: number } {
  const by_domain_j: Record<string, number> = {};
  let covered_ms = 0;
  for (const s of samples) {
    const overlap = Math.min(t1, s.end_ms) - Math.max(t0, s.end_ms - s.elapsed_ms);
    if (!(overlap > 0)) continue;
    covered_ms += overlap;
    for (const [d, w] of Object.entries(s.watts)) by_domain_j[d] = (by_domain_j[d] ?? 0) + (w * overlap) / 1000;
  }
  return { by_domain_j, covered_ms };
}
