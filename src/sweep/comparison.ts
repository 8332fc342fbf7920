import type { BenchReport } from '../core/aggregate.js';
import type { PairedColumns } from '../stats/paired-columns.js';
import { compare } from '../core/compare.js';
import { armFrontiers, type Arm, type FrontierAxis } from '../core/frontier.js';
import { verdictOf, withPairedStats } from '../core/paired-compare.js';
import type { CaseResult } from '../core/types.js';
import type { Interval } from '../stats/interval.js';
import type { ReportCi } from '../stats/report-ci.js';
import { adjustPValues, type PAdjust } from '../stats/holm.js';

/** One finished arm × suite, loaded for the comparison. */
export interface SweepArmRun {
  arm: string;
  suite: string;
  report: BenchReport;
  /** Scored case results (for pairing against the baseline); null when unavailable or given as `paired`. */
  results: readonly CaseResult[] | null;
  /** The scored cases' paired figures (a sweep folder's runs, read as columns); used before `results`. */
  paired?: PairedColumns | null;
  /** The run's results file, when it has one. */
  results_path?: string | null;
}

export interface SweepArmRow {
  arm: string;
  accuracy_pct: number | null;
  accuracy_ci: Interval | null;
  joules_per_correct: number | null;
  joules_per_correct_ci: Interval | null;
  usd_per_correct: number | null;
  usd_per_correct_ci: Interval | null;
  latency_p95_ms: number | null;
  latency_p95_ci: Interval | null;
  energy_source: string;
  energy_attribution: string;
  suite_digest: string;
}

export interface SweepFrontier {
  /** Arms on the Pareto frontier, from most accurate. */
  frontier: string[];
  /** Dominated arms whose intervals overlap a frontier arm's on both axes: the data cannot tell them apart. */
  not_distinguishable: string[];
  /** Why the frontier is withheld (different digests or energy sources), else null. */
  withheld: string | null;
  /** Arms that could not be placed, with the reason. */
  not_placed: { arm: string; reason: string }[];
}

export interface SweepVsBaseline {
  arm: string;
  accuracy_pp_delta: number | null;
  accuracy_pp_delta_ci95: Interval | null;
  accuracy_p_value: number | null;
  /** McNemar's p adjusted over the suite's comparisons (`p_adjust`: Holm's step-down, or `none`: the raw p); the verdict reads it. */
  accuracy_p_adjusted: number | null;
  accuracy_verdict: string;
  joules_per_correct_pct: number | null;
  joules_per_correct_ratio_ci95: Interval | null;
  joules_per_correct_verdict: string;
  latency_p95_pct: number | null;
  latency_p95_ms_delta_ci95: Interval | null;
  latency_p95_verdict: string;
  /** $/correct and total $ as J/correct: % change, the paired ratio's 95 % interval, the verdict. */
  usd_per_correct_pct: number | null;
  usd_per_correct_ratio_ci95: Interval | null;
  usd_per_correct_verdict: string;
  total_usd_pct: number | null;
  total_usd_ratio_ci95: Interval | null;
  total_usd_verdict: string;
  /** Why no paired statistics (different digests, missing results), else null. */
  reason: string | null;
  /** True when the suite digests differ: every delta is null and every verdict `withheld` (see `reason`). */
  withheld?: true;
}

export interface SweepSuiteComparison {
  suite: string;
  arms: SweepArmRow[];
  frontiers: Record<'energy' | 'cost', SweepFrontier>;
  baseline: string | null;
  vs_baseline: SweepVsBaseline[];
}

export interface SweepComparison {
  format: 'joulebench-sweep-comparison/1';
  sweep: { id: string; name: string };
  alpha: number;
  /** `holm`: McNemar's p-values Holm-adjusted, the other verdicts by (1 − α/m) intervals over the m arms paired; `none`: each at α. */
  p_adjust: PAdjust;
  suites: SweepSuiteComparison[];
  /** Arm × suite runs that did not finish, with why. */
  missing: { arm: string; suite: string; reason: string }[];
}

/** The sweep's comparison per suite: arms with intervals, the J/correct and $/correct frontiers, pairs against the baseline. */
export function sweepComparison(
  sweep: { id: string; name: string; suites: readonly string[]; arms: readonly string[]; baseline: string | null },
  runs: readonly SweepArmRun[],
  opts: { alpha?: number; pAdjust?: PAdjust; resamples?: number; maxUnits?: number | 'inf'; missing?: SweepComparison['missing'] } = {},
): SweepComparison {
  const alpha = opts.alpha ?? 0.05;
  const pAdjust = opts.pAdjust ?? 'holm';
  const suites = sweep.suites.map((suite): SweepSuiteComparison => {
    const here = sweep.arms.map((a) => runs.find((r) => r.arm === a && r.suite === suite)).filter((r): r is SweepArmRun => r !== undefined);
    const rows = here.map((r) => rowOf(r));
    const arms: Arm[] = here.map((r) => ({
      id: r.arm,
      accuracy_pct: r.report.accuracy_pct,
      joules_per_correct: r.report.joules_per_correct,
      usd_per_correct: r.report.usd_per_correct,
      latency_p95_ms: r.report.latency_p95_ms,
      energy_source: r.report.energy_source,
      below_floor_count: r.report.below_floor_count,
      asked: r.report.suite?.digest ?? null,
    }));
    const fr = armFrontiers(arms);
    const frontiers = {
      energy: frontierOf(fr.frontiers.energy, rows, 'joules_per_correct'),
      cost: frontierOf(fr.frontiers.cost, rows, 'usd_per_correct'),
    };
    const base = sweep.baseline ? here.find((r) => r.arm === sweep.baseline) : undefined;
    // The family: arms that can be paired with the baseline (same digest, per-case figures on both sides).
    const pairable = (r: SweepArmRun): boolean =>
      !!base && !!r.report.suite?.digest && r.report.suite.digest === base.report.suite?.digest && (r.paired ?? r.results) != null && (base.paired ?? base.results) != null;
    const m = base ? here.filter((r) => r.arm !== base.arm && pairable(r)).length : 0;
    const intervalAlpha = pAdjust === 'holm' && m > 1 ? alpha / m : alpha;
    const vs = base
      ? here
          .filter((r) => r.arm !== base.arm)
          .map((r): SweepVsBaseline => {
            const p = withPairedStats(
              compare(base.report, r.report),
              { digest: base.report.suite?.digest, results: base.results, paired: base.paired ?? null },
              { digest: r.report.suite?.digest, results: r.results, paired: r.paired ?? null },
              { alpha: intervalAlpha, ...(opts.resamples !== undefined ? { resamples: opts.resamples } : {}), ...(opts.maxUnits !== undefined ? { maxUnits: opts.maxUnits } : {}) },
            );
            const verdict = (v: string): string => (p.withheld ? 'withheld' : v);
            return {
              arm: r.arm,
              accuracy_pp_delta: p.accuracy_pp_delta,
              accuracy_pp_delta_ci95: p.accuracy_pp_delta_ci95,
              accuracy_p_value: p.accuracy_p_value,
              accuracy_p_adjusted: null,
              accuracy_verdict: verdict(verdictOf(p.accuracy_pp_delta, p.significant.accuracy_pp_delta, true)),
              joules_per_correct_pct: p.joules_per_correct_pct,
              joules_per_correct_ratio_ci95: p.joules_per_correct_ratio_ci95,
              joules_per_correct_verdict: verdict(verdictOf(p.joules_per_correct_pct, p.significant.joules_per_correct_pct, false)),
              latency_p95_pct: p.latency_p95_pct,
              latency_p95_ms_delta_ci95: p.latency_p95_ms_delta_ci95,
              latency_p95_verdict: verdict(verdictOf(p.latency_p95_pct, p.significant.latency_p95_pct, false)),
              usd_per_correct_pct: p.usd_per_correct_pct,
              usd_per_correct_ratio_ci95: p.usd_per_correct_ratio_ci95,
              usd_per_correct_verdict: verdict(verdictOf(p.usd_per_correct_pct, p.significant.usd_per_correct_pct, false)),
              total_usd_pct: p.total_usd_pct,
              total_usd_ratio_ci95: p.total_usd_ratio_ci95,
              total_usd_verdict: verdict(verdictOf(p.total_usd_pct, p.significant.total_usd_pct, false)),
              reason: p.paired_reason,
              ...(p.withheld ? { withheld: true as const } : {}),
            };
          })
      : [];
    const adjusted = adjustPValues(vs.map((v) => v.accuracy_p_value), pAdjust);
    vs.forEach((v, i) => {
      const q = adjusted[i] ?? null;
      v.accuracy_p_adjusted = q;
      if (!v.withheld && q !== null) v.accuracy_verdict = verdictOf(v.accuracy_pp_delta, q < alpha, true);
    });
    return { suite, arms: rows, frontiers, baseline: base ? base.arm : null, vs_baseline: vs };
  });
  return { format: 'joulebench-sweep-comparison/1', sweep: { id: sweep.id, name: sweep.name }, alpha, p_adjust: pAdjust, suites, missing: opts.missing ?? [] };
}

function rowOf(r: SweepArmRun): SweepArmRow {
  const ci = (r.report as Partial<BenchReport>).ci as ReportCi | undefined;
  return {
    arm: r.arm,
    accuracy_pct: r.report.accuracy_pct,
    accuracy_ci: ci?.accuracy_pct ?? null,
    joules_per_correct: r.report.joules_per_correct,
    joules_per_correct_ci: ci?.joules_per_correct ?? null,
    usd_per_correct: r.report.usd_per_correct,
    usd_per_correct_ci: ci?.usd_per_correct ?? null,
    latency_p95_ms: r.report.latency_p95_ms,
    latency_p95_ci: ci?.latency_p95_ms ?? null,
    energy_source: r.report.energy_source,
    energy_attribution: r.report.energy_attribution,
    suite_digest: r.report.suite?.digest ?? '',
  };
}

const overlap = (a: Interval | null, b: Interval | null): boolean => a !== null && b !== null && a.low <= b.high && b.low <= a.high;

function frontierOf(f: ReturnType<typeof armFrontiers>['frontiers'][FrontierAxis], rows: readonly SweepArmRow[], field: 'joules_per_correct' | 'usd_per_correct'): SweepFrontier {
  const byArm = new Map(rows.map((r) => [r.arm, r]));
  const withheldReason = f.frontier.length === 0 && f.verdicts.length > 0 && f.verdicts.every((v) => v.excluded?.startsWith('not comparable')) ? (f.verdicts[0]!.excluded ?? null) : null;
  const ciOf = (r: SweepArmRow) => (field === 'joules_per_correct' ? r.joules_per_correct_ci : r.usd_per_correct_ci);
  const notDistinguishable = f.verdicts
    .filter((v) => !v.optimal && v.excluded === null)
    .filter((v) => {
      const a = byArm.get(v.id)!;
      return f.frontier.some((id) => {
        const front = byArm.get(id)!;
        return overlap(a.accuracy_ci, front.accuracy_ci) && overlap(ciOf(a), ciOf(front));
      });
    })
    .map((v) => v.id);
  return {
    frontier: f.frontier,
    not_distinguishable: notDistinguishable,
    withheld: withheldReason,
    not_placed: withheldReason ? [] : f.verdicts.filter((v) => v.excluded !== null).map((v) => ({ arm: v.id, reason: v.excluded! })),
  };
}
