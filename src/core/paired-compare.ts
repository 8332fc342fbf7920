import type { Comparison } from './compare.js';
import { round } from './stats.js';
import type { CaseResult } from './types.js';
import type { Interval } from '../stats/interval.js';
import { pairedComparison, type PairedCase, type PairedComparison } from '../stats/paired.js';
import type { PairedColumns } from '../stats/paired-columns.js';
import { maxUnitsValue, type BootstrapMaxUnits } from '../stats/bootstrap.js';

/** Which figures carry a significance verdict (the gate's metrics). */
export type Significance = Record<keyof typeof PAIRED_FIGURE, boolean | null>;

/** Each gate metric, in the order `significant` and `gate_intervals` list them, with the paired figure it is judged by. */
const PAIRED_FIGURE = {
  accuracy_pp_delta: 'accuracy_pp_delta',
  joules_per_correct_pct: 'joules_per_correct_ratio',
  latency_p95_pct: 'latency_p95_ms_delta',
  usd_per_correct_pct: 'usd_per_correct_ratio',
  total_usd_pct: 'total_usd_ratio',
} as const satisfies Record<string, keyof PairedComparison>;

/** Every gate metric, each with `value`. */
function perMetric<T>(value: (figure: (typeof PAIRED_FIGURE)[keyof Significance]) => T): Record<keyof Significance, T> {
  return Object.fromEntries(Object.entries(PAIRED_FIGURE).map(([metric, figure]) => [metric, value(figure)])) as Record<keyof Significance, T>;
}

/**
 * `compare`'s output with the paired statistics: 95 % intervals, McNemar's p, and a verdict per
 * figure at `alpha`. All null, with `paired_reason`, when the runs cannot be paired (different digests,
 * no per-case results).
 */
export interface PairedFields {
  accuracy_pp_delta_ci95: Interval | null;
  accuracy_p_value: number | null;
  joules_per_correct_ratio_ci95: Interval | null;
  latency_p95_ms_delta_ci95: Interval | null;
  /** (candidate $/correct) / (baseline $/correct), as the J/correct ratio. */
  usd_per_correct_ratio_ci95: Interval | null;
  /** (candidate total $) / (baseline total $) over the paired results. */
  total_usd_ratio_ci95: Interval | null;
  significant: Significance;
  /** The gate's figures as intervals at level 1 − alpha, in the gate's units (% change, points). */
  gate_intervals: Record<keyof Significance, Interval | null>;
  alpha: number;
  paired: PairedComparison | null;
  paired_reason: string | null;
  /** True when the suite digests differ: the changes above are null, not computed (`paired_reason` says why). */
  withheld?: true;
}

export type PairedComparisonReport = Comparison & PairedFields;

interface PairRunsInput {
  /** Suite digests; runs pair only when they match. */
  digest: string | undefined;
  results: readonly CaseResult[] | null;
  /** The scored cases' paired figures (`pairedCaseOf`), when the whole cases were not kept; used before `results`. */
  paired?: readonly PairedCase[] | PairedColumns | null;
}

/** A scored result as the paired comparison reads it. */
export function pairedCaseOf(r: CaseResult): PairedCase {
  return {
    key: `${r.pass}:${r.index}`,
    unit: r.index,
    passed: r.passed,
    weight: r.weight,
    joules: r.joules,
    usd: r.cost_usd,
    latency_ms: r.error === null ? Math.floor(r.latency_ms) : null,
  };
}

/**
 * Adds the paired statistics to a comparison. Pure: the seed is the shared suite digest, so the same
 * two runs always give the same intervals.
 */
export function withPairedStats(
  c: Comparison,
  base: PairRunsInput,
  cand: PairRunsInput,
  opts: { alpha?: number; resamples?: number; maxUnits?: BootstrapMaxUnits } = {},
): PairedComparisonReport {
  const alpha = opts.alpha ?? 0.05;
  const none = (reason: string): PairedComparisonReport => ({
    ...c,
    accuracy_pp_delta_ci95: null,
    accuracy_p_value: null,
    joules_per_correct_ratio_ci95: null,
    latency_p95_ms_delta_ci95: null,
    usd_per_correct_ratio_ci95: null,
    total_usd_ratio_ci95: null,
    significant: perMetric(() => null),
    gate_intervals: perMetric(() => null),
    alpha,
    paired: null,
    paired_reason: reason,
  });
  if (!base.digest || !cand.digest) return none('a run does not name its suite digest: cannot tell that the same questions were asked');
  if (base.digest !== cand.digest) {
    // Different questions: a change between the two figures would be a difference of questions, not of systems.
    return {
      ...none('different suite digests: the runs asked different questions, so no change, interval, p-value or verdict between them is stated (withheld)'),
      ...perMetric(() => null),
      withheld: true,
    };
  }
  const cases = (run: PairRunsInput): readonly PairedCase[] | PairedColumns | null => run.paired ?? run.results?.filter((r) => r.phase === 'scored').map(pairedCaseOf) ?? null;
  const baseCases = cases(base);
  const candCases = cases(cand);
  if (!baseCases || !candCases) return none('per-case results not found for a run (pass the results JSONL, or keep it next to the report)');
  const p = pairedComparison(baseCases, candCases, {
    seed: base.digest,
    alpha,
    resamples: opts.resamples,
    maxUnits: maxUnitsValue(opts.maxUnits),
    energyComparable: c.energy_sources_match !== false,
  });
  if (p.pairs === 0) return none('no case of one run has a partner in the other');
  const scale = (i: Interval | null, f: (v: number) => number): Interval | null => (i ? { ...i, low: round(f(i.low), 4), high: round(f(i.high), 4) } : null);
  const baseP95 = c.baseline.latency_p95_ms;
  return {
    ...c,
    accuracy_pp_delta_ci95: p.accuracy_pp_delta.ci95,
    accuracy_p_value: p.accuracy_pp_delta.mcnemar?.p_value ?? null,
    joules_per_correct_ratio_ci95: p.joules_per_correct_ratio.ci95,
    latency_p95_ms_delta_ci95: p.latency_p95_ms_delta.ci95,
    usd_per_correct_ratio_ci95: p.usd_per_correct_ratio.ci95,
    total_usd_ratio_ci95: p.total_usd_ratio.ci95,
    significant: perMetric((figure) => p[figure].significant),
    gate_intervals: {
      accuracy_pp_delta: p.accuracy_pp_delta.ci_alpha,
      joules_per_correct_pct: scale(p.joules_per_correct_ratio.ci_alpha, pctOfRatio),
      latency_p95_pct: baseP95 === null || baseP95 === 0 ? null : scale(p.latency_p95_ms_delta.ci_alpha, (d) => (d * 100) / baseP95),
      usd_per_correct_pct: scale(p.usd_per_correct_ratio.ci_alpha, pctOfRatio),
      total_usd_pct: scale(p.total_usd_ratio.ci_alpha, pctOfRatio),
    },
    alpha,
    paired: p,
    paired_reason: null,
  };
}

/** A plain verdict for people: better, worse, or no detectable change (lower is better unless `higherBetter`). */
export function verdictOf(delta: number | null, significant: boolean | null, higherBetter: boolean): 'better' | 'worse' | 'no detectable change' | 'n/a' {
  if (delta === null || significant === null) return 'n/a';
  if (!significant || delta === 0) return 'no detectable change';
  return delta > 0 === higherBetter ? 'better' : 'worse';
}

/** A ratio (candidate / baseline) as the % change the deltas are written in. */
export const pctOfRatio = (r: number): number => (r - 1) * 100;
