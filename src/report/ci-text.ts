import { pc } from './colors.js';
import type { BenchReport } from '../core/aggregate.js';
import { CI_FIGURES, type CiFigure, type ReportCi } from '../stats/report-ci.js';
import type { Interval } from '../stats/interval.js';
import { fmtJoules, fmtMs, fmtPct, fmtRange, fmtUsd, table } from './format.js';

const FIGURES: Record<CiFigure, [label: string, fmt: (v: number) => string]> = {
  accuracy_pct: ['accuracy', fmtPct],
  joules_per_correct: ['J / correct', fmtJoules],
  usd_per_correct: ['$ / correct', fmtUsd],
  latency_p50_ms: ['latency p50', fmtMs],
  latency_p95_ms: ['latency p95', fmtMs],
  latency_p99_ms: ['latency p99', fmtMs],
};

/** {@link fmtRange} in the figure's unit. */
export const fmtInterval = (f: CiFigure, i: Interval | null | undefined): string => fmtRange(i, FIGURES[f][1]);

function howText(i: Interval, ci: ReportCi): string {
  if (i.method === 'degenerate') return 'identical values: no interval to state';
  const over = ci.unit === 'subject' ? `${ci.clusters ?? '?'} subjects (clustered)` : ci.unit === 'question' ? `${ci.clusters ?? '?'} questions (clustered)` : 'cases';
  if (i.method === 'bootstrap') return `bootstrap, ${ci.resamples} resamples over ${over}`;
  const above = ci.analytic ? ` (${ci.analytic.units} ${ci.unit === 'case' ? 'cases' : 'clusters'} > ${ci.analytic.bootstrap_max_units}: no bootstrap)` : '';
  if (i.method === 'delta') return `delta method over ${over}${above}`;
  if (i.method === 'woodruff') return `Woodruff over ${over}${above}`;
  return i.method;
}

/** The intervals section of the run table: one row per figure, with its method or why none. */
export function renderCiTable(r: BenchReport): string {
  const ci = (r as Partial<BenchReport>).ci as ReportCi | undefined;
  if (!ci) return '';
  // A degenerate row states no coverage, so the column does not claim one for it.
  const degenerate = CI_FIGURES.some((f) => ci[f]?.method === 'degenerate');
  const level = `${Math.round(ci.level * 100)} %`;
  const rows: string[][] = [[pc.dim('figure'), pc.dim(degenerate ? `interval (${level} unless degenerate)` : `${level} interval`), pc.dim('how')]];
  for (const f of CI_FIGURES) {
    const i = ci[f];
    rows.push([FIGURES[f][0], fmtInterval(f, i), pc.dim(i ? howText(i, ci) : (ci.reasons[f] ?? ''))]);
  }
  const spread = (r as Partial<BenchReport>).repeat_spread;
  if (spread) {
    rows.push(['', '', '']);
    rows.push([pc.dim(`between ${spread.passes} passes`), pc.dim('mean ± sd'), pc.dim('min – max')]);
    const figures = [
      ['total energy', 'total_joules', fmtJoules],
      ['J / correct', 'joules_per_correct', fmtJoules],
      ['latency p50', 'latency_p50_ms', fmtMs],
      ['latency p95', 'latency_p95_ms', fmtMs],
    ] as const;
    for (const [label, k, f] of figures) {
      const s = spread[k];
      rows.push([label, s ? `${f(s.mean)} ± ${s.sd === null ? 'n/a' : f(s.sd)}` : 'n/a', s ? pc.dim(`${f(s.min)} – ${f(s.max)}`) : pc.dim(spread.reasons[k] ?? '')]);
    }
  }
  return table(rows, ['l', 'r', 'l']);
}
