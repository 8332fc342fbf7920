import { round } from '../core/stats.js';

/** pass@k and pass^k from n rollouts per task, and what they cost in energy and dollars. */

function checkCounts(n: number, c: number, k: number, what: string): void {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new RangeError(`${what}: need integers 0 ≤ c ≤ n, 1 ≤ k ≤ n, got n=${n} c=${c} k=${k}`);
  }
}

/** Unbiased pass@k (Chen et al. 2021): 1 − C(n−c, k)/C(n, k) as the product 1 − Π_{i=n−c+1}^{n} (1 − k/i). */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts(n, c, k, 'passAtK');
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/** pass^k: the chance that all k rollouts drawn without replacement from n, c correct, are correct — C(c, k)/C(n, k) = Π_{i<k} (c−i)/(n−i). */
export function passHatK(n: number, c: number, k: number): number {
  checkCounts(n, c, k, 'passHatK');
  if (c < k) return 0;
  let prod = 1;
  for (let i = 0; i < k; i++) prod *= (c - i) / (n - i);
  return prod;
}

/** One task's rollouts as the curve reads them. */
export interface TaskRollouts {
  /** Per rollout: resolved or not. */
  resolved: readonly boolean[];
  /** Per rollout, J; `null` when a rollout's energy is unknown. */
  joules: readonly (number | null)[];
  /** Per rollout, $; `null` when a rollout's cost is unknown. */
  usd: readonly (number | null)[];
}

/** The curve at one k, averaged over tasks. */
export interface PassAtKPoint {
  k: number;
  /** Mean over tasks of the unbiased pass@k, percent. */
  pass_at_k_pct: number;
  /** Mean over tasks of pass^k (all k resolved), percent. */
  pass_hat_k_pct: number;
  /** Expected energy of k rollouts on every task, J: Σ_task k × (mean J per rollout); `null` when any energy is unknown. */
  expected_joules: number | null;
  /** expected_joules ÷ expected tasks resolved at pass@k (Σ_task pass@k); `null` when unknown or nothing resolves. */
  joules_per_resolved: number | null;
  /** expected_joules ÷ Σ_task pass^k; `null` when unknown or no task resolves on every rollout. */
  joules_per_resolved_all_k: number | null;
  /** The same three in dollars. */
  expected_usd: number | null;
  usd_per_resolved: number | null;
  usd_per_resolved_all_k: number | null;
}

/** pass@k and pass^k for k = 1…K (K the fewest rollouts of any task), with k rollouts' expected J and $ per resolved task. */
export function passAtKCurve(tasks: readonly TaskRollouts[]): PassAtKPoint[] {
  if (tasks.length === 0) return [];
  for (const t of tasks) {
    if (t.resolved.length === 0 || t.joules.length !== t.resolved.length || t.usd.length !== t.resolved.length) {
      throw new RangeError('passAtKCurve: every task needs ≥ 1 rollout, with one energy and one cost per rollout');
    }
  }
  const K = Math.min(...tasks.map((t) => t.resolved.length));
  const meanOf = (xs: readonly (number | null)[]): number | null => (xs.some((x) => x === null) ? null : (xs as number[]).reduce((a, b) => a + b, 0) / xs.length);
  const meanJ = tasks.map((t) => meanOf(t.joules));
  const meanUsd = tasks.map((t) => meanOf(t.usd));
  const sumOrNull = (xs: readonly (number | null)[]): number | null => (xs.some((x) => x === null) ? null : (xs as number[]).reduce((a, b) => a + b, 0));
  const perRollJ = sumOrNull(meanJ);
  const perRollUsd = sumOrNull(meanUsd);
  const out: PassAtKPoint[] = [];
  for (let k = 1; k <= K; k++) {
    let at = 0;
    let hat = 0;
    for (const t of tasks) {
      const n = t.resolved.length;
      const c = t.resolved.filter(Boolean).length;
      at += passAtK(n, c, k);
      hat += passHatK(n, c, k);
    }
    const ej = perRollJ === null ? null : k * perRollJ;
    const eu = perRollUsd === null ? null : k * perRollUsd;
    const per = (e: number | null, r: number): number | null => (e === null || r <= 0 ? null : round(e / r, 9));
    out.push({
      k,
      pass_at_k_pct: round((at * 100) / tasks.length, 6),
      pass_hat_k_pct: round((hat * 100) / tasks.length, 6),
      expected_joules: ej === null ? null : round(ej, 9),
      joules_per_resolved: per(ej, at),
      joules_per_resolved_all_k: per(ej, hat),
      expected_usd: eu === null ? null : round(eu, 9),
      usd_per_resolved: per(eu, at),
      usd_per_resolved_all_k: per(eu, hat),
    });
  }
  return out;
}

/**
 * Resolution under an energy budget B J, percent (after SWE-Effi): (1/B)∫₀ᴮ rate(b) db, each resolved rollout
 * that spent j ≤ B contributing (B − j)/B; `null` when a resolved rollout's energy is unknown.
 */
export function resolutionUnderBudget(tasks: readonly TaskRollouts[], budgetJ: number): number | null {
  if (!(Number.isFinite(budgetJ) && budgetJ > 0)) throw new RangeError(`resolutionUnderBudget: budget must be a positive number of joules, got ${budgetJ}`);
  if (tasks.length === 0) return null;
  let total = 0;
  for (const t of tasks) {
    let share = 0;
    for (let i = 0; i < t.resolved.length; i++) {
      if (!t.resolved[i]) continue;
      const j = t.joules[i];
      if (j === null || j === undefined) return null;
      if (j <= budgetJ) share += (budgetJ - j) / budgetJ;
    }
    total += share / t.resolved.length;
  }
  return round((total * 100) / tasks.length, 6);
}
