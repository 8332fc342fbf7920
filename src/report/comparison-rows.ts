import type { Comparison } from '../core/compare.js';
import { pctOfRatio, verdictOf, type PairedComparisonReport } from '../core/paired-compare.js';
import type { Interval } from '../stats/interval.js';
import { fmtJoules, fmtMs, fmtP, fmtPct, fmtRange, fmtSigned, fmtUsd } from './format.js';

/** One figure of a comparison as the terminal table and the Markdown show it. */
interface ComparisonRow {
  metric: string;
  baseline: string;
  candidate: string;
  change: string;
  better: 'lower' | 'higher';
  /** The 95 % interval of the change, in the change's unit; null when the runs were not paired. */
  interval: string | null;
  /** McNemar's p for accuracy; '' where no test gives one; null when not paired. */
  p: string | null;
  /** better / worse / no detectable change / n/a / withheld; null when not paired. */
  verdict: string | null;
  /** Why this figure has no interval, when the runs were paired. */
  reason: string | null;
}

const ci = (i: Interval | null, f: (v: number) => number, unit: string): string => fmtRange(i, (v) => fmtSigned(f(v), unit));

/** The five compared figures: each change with, once paired, its 95 % interval, p-value and verdict. Pure. */
export function comparisonRows(c: Comparison | PairedComparisonReport): ComparisonRow[] {
  const p = 'significant' in c ? c : null;
  const withheld = p?.withheld === true;
  const base95 = c.baseline.latency_p95_ms;
  const row = (
    metric: string,
    values: [string, string],
    delta: number | null,
    unit: string,
    better: 'lower' | 'higher',
    sig: keyof PairedComparisonReport['significant'],
    interval: (q: PairedComparisonReport) => string,
    reason: (q: NonNullable<PairedComparisonReport['paired']>) => string | undefined,
  ): ComparisonRow => ({
    metric,
    baseline: values[0],
    candidate: values[1],
    change: withheld ? 'withheld' : fmtSigned(delta, unit),
    better,
    interval: p && !withheld ? interval(p) : null,
    p: p && !withheld ? (sig === 'accuracy_pp_delta' ? fmtP(p.accuracy_p_value) : '') : null,
    verdict: !p ? null : withheld ? 'withheld' : verdictOf(delta, p.significant[sig], better === 'higher'),
    reason: (p?.paired && reason(p.paired)) || null,
  });
  return [
    row('J / correct', [fmtJoules(c.baseline.joules_per_correct), fmtJoules(c.candidate.joules_per_correct)], c.joules_per_correct_pct, ' %', 'lower', 'joules_per_correct_pct', (q) => ci(q.joules_per_correct_ratio_ci95, pctOfRatio, ' %'), (q) => q.joules_per_correct_ratio.reason),
    row('latency p95', [fmtMs(base95), fmtMs(c.candidate.latency_p95_ms)], c.latency_p95_pct, ' %', 'lower', 'latency_p95_pct', (q) => (base95 ? ci(q.latency_p95_ms_delta_ci95, (d) => (d * 100) / base95, ' %') : 'n/a'), (q) => q.latency_p95_ms_delta.reason),
    row('accuracy', [fmtPct(c.baseline.accuracy_pct), fmtPct(c.candidate.accuracy_pct)], c.accuracy_pp_delta, ' pp', 'higher', 'accuracy_pp_delta', (q) => ci(q.accuracy_pp_delta_ci95, (v) => v, ' pp'), (q) => q.accuracy_pp_delta.reason),
    row('$ / correct', [fmtUsd(c.baseline.usd_per_correct ?? null), fmtUsd(c.candidate.usd_per_correct ?? null)], c.usd_per_correct_pct, ' %', 'lower', 'usd_per_correct_pct', (q) => ci(q.usd_per_correct_ratio_ci95, pctOfRatio, ' %'), (q) => q.usd_per_correct_ratio.reason),
    row('total $', [fmtUsd(c.baseline.total_usd ?? null), fmtUsd(c.candidate.total_usd ?? null)], c.total_usd_pct, ' %', 'lower', 'total_usd_pct', (q) => ci(q.total_usd_ratio_ci95, pctOfRatio, ' %'), (q) => q.total_usd_ratio.reason),
  ];
}

/** How the paired statistics were made, in one sentence (null when not paired). */
export function pairedHow(p: PairedComparisonReport): string | null {
  if (!p.paired) return null;
  const how = p.paired.analytic
    ? `large-sample paired intervals (delta method, Woodruff) over cases: ${p.paired.analytic.units} paired cases are more than the bootstrap's limit of ${p.paired.analytic.bootstrap_max_units}`
    : `paired bootstrap (${p.paired.resamples} resamples over cases)`;
  return `Paired over ${p.paired.pairs} results that both runs answered (same suite digest): intervals by ${how}, accuracy by an exact McNemar test.`;
}
