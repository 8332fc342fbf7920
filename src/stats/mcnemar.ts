/** An exact McNemar test on paired binary outcomes. */
export interface McNemarResult {
  /** Pairs the baseline got right and the candidate wrong. */
  baseline_only: number;
  /** Pairs the candidate got right and the baseline wrong. */
  candidate_only: number;
  /** Two-sided exact p-value. */
  p_value: number;
  method: 'mcnemar-exact';
}

/** McNemar's exact test (1947): p = min(1, 2·P(X ≤ min(b, c))), X ~ Binomial(b + c, 1/2); p = 1 with no discordant pair. */
export function mcnemar(baselineOnly: number, candidateOnly: number): McNemarResult {
  for (const v of [baselineOnly, candidateOnly]) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`mcnemar: discordant counts must be integers >= 0, got ${v}`);
  }
  const n = baselineOnly + candidateOnly;
  const k = Math.min(baselineOnly, candidateOnly);
  const p = n === 0 ? 1 : Math.min(1, 2 * binomialHalfCdf(k, n));
  return { baseline_only: baselineOnly, candidate_only: candidateOnly, p_value: p, method: 'mcnemar-exact' };
}

/** P(X ≤ k) for X ~ Binomial(n, 1/2): doubles up to n = 1000 (C(n, i) < 1e300), log-sum-exp above. */
export function binomialHalfCdf(k: number, n: number): number {
  if (k >= n) return 1;
  if (k < 0) return 0;
  if (n <= 1000) {
    let term = 1;
    let sum = 0;
    for (let i = 0; i <= k; i++) {
      sum += term;
      term = (term * (n - i)) / (i + 1);
    }
    return Math.min(1, sum * 2 ** -n);
  }
  const logs: number[] = [];
  let logC = 0;
  for (let i = 0; i <= k; i++) {
    logs.push(logC);
    logC += Math.log(n - i) - Math.log(i + 1);
  }
  let max = -Infinity;
  for (const l of logs) if (l > max) max = l;
  let s = 0;
  for (const l of logs) s += Math.exp(l - max);
  return Math.min(1, Math.exp(max + Math.log(s) - n * Math.LN2));
}
