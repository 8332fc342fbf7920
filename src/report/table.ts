import { hasStages } from './stages.js';
import { pc } from './colors.js';
import type { BenchReport } from '../core/aggregate.js';
import type { Comparison } from '../core/compare.js';
import type { PairedComparisonReport } from '../core/paired-compare.js';
import { comparisonRows, pairedHow } from './comparison-rows.js';
import { renderCiTable } from './ci-text.js';
import { fmtJoules, fmtMs, fmtPct, fmtUsd, table, unscoredOf } from './format.js';
import { hasMtBench, renderMtBenchTable } from './mt-bench-table.js';

/** What each energy source means, printed under the table so nobody mistakes a model for a meter. */
const SOURCE_NOTES: Partial<Record<string, string>> = {
  model: "the target's own cost model (for the reference cascade: fixed per-stage constants), not a measurement",
  estimate: 'a coefficient (time × watts), not a measurement',
  mixed: 'cases measured by different sources; see energy_sources in the report',
  none: 'nothing measured energy for this run',
  'integrated-power': 'GPU power draw sampled and integrated over time (NVML without an energy counter)',
  composite: 'several meters read over one window (CPU and GPU), each domain labelled in the results',
  amdsmi: "AMD SMI's GPU energy counter × its resolution",
  powermetrics: "macOS powermetrics' sampled CPU/GPU/ANE power integrated over time (not a counter)",
  'model:api': 'a published model of a remote endpoint (EcoLogits, from output tokens and parameter count), not a measurement; the J/correct range is its uncertainty',
};

/** The run report as people read it in a terminal. Every energy figure shows its source. */
export function renderReportTable(r: BenchReport): string {
  const src = pc.dim(`[${r.energy_source}]`);
  const lines = [
    pc.bold(`joulebench · suite ${r.suite.name}`) + pc.dim(` (${r.suite.version}, ${r.suite.digest.slice(0, 19)}…)`) +
      ` · target ${r.target} · meter ${r.meter}`,
    pc.dim(
      `${r.case_count} scored results (${r.repeats} pass${r.repeats === 1 ? '' : 'es'})` +
        ` · ${r.warmup} warmup pass${r.warmup === 1 ? '' : 'es'} recorded, not scored`,
    ),
    '',
  ];
  const unscored = unscoredOf(r) ?? 0;
  const head: string[][] = [
    ['accuracy', fmtPct(r.accuracy_pct), pc.dim(`${r.correct_count}/${r.scored_count} scored cases correct`) + (unscored > 0 ? pc.yellow(`, ${unscored} unscored`) : '')],
    [
      'total energy',
      fmtJoules(r.total_joules),
      // A total from the suite window (a load run, overlapping cases) stands beside cases with no figure of their own.
      r.total_joules === null && r.energy_unknown_count > 0
        ? pc.yellow(`unknown for ${r.energy_unknown_count} case(s): no total rather than a partial one`)
        : r.energy_basis_reason
          ? pc.yellow(`${r.energy_basis === 'suite_window' ? `${src} from the suite window: ` : ''}${r.energy_basis_reason}`)
        : r.total_joules === null && r.energy_attribution === 'shared'
          ? pc.yellow('concurrent cases: per-case windows overlap, see suite gross below')
          : src,
    ],
    ['J / correct', fmtJoules(r.joules_per_correct), r.joules_per_correct === null ? pc.dim(perCorrectUnknown(r)) : src],
    ...(r.energy_model_range?.joules_per_correct
      ? [['J / correct range', `${fmtJoules(r.energy_model_range.joules_per_correct.low)} – ${fmtJoules(r.energy_model_range.joules_per_correct.high)}`, pc.dim(`[${r.energy_source}] modelled low–high`)]]
      : []),
    [
      'suite gross / net',
      `${fmtJoules(r.gross_joules)} / ${fmtJoules(r.net_joules)}`,
      pc.dim(`[${r.gross_source}] ${idleText(r)}`) + (r.suite_below_floor ? pc.yellow(' below meter floor') : ''),
    ],
    [
      'latency p50 / p95 / p99',
      `${fmtMs(r.latency_p50_ms)} / ${fmtMs(r.latency_p95_ms)} / ${fmtMs(r.latency_p99_ms)}`,
      pc.dim('nearest-rank, whole ms (truncated; µs per case in the results file)'),
    ],
  ];
  if (r.ttft_p50_ms != null) head.push(['TTFT p50 / p95', `${r.ttft_p50_ms} / ${r.ttft_p95_ms} ms`, '']);
  // Absent from reports written before these fields, null without a streamed reply: no line then.
  if (r.mean_tpot_ms != null) head.push(['TPOT mean / median / p99', `${r.mean_tpot_ms} / ${r.median_tpot_ms} / ${r.p99_tpot_ms} ms`, '']);
  if (r.mean_itl_ms != null) head.push(['ITL mean / median / p99', `${r.mean_itl_ms} / ${r.median_itl_ms} / ${r.p99_itl_ms} ms`, '']);
  if (r.total_usd != null) head.push(['cost', fmtUsd(r.total_usd), pc.dim(`${fmtUsd(r.usd_per_correct)} per correct`)]);
  else if ((r.cost_unknown_count ?? 0) > 0) {
    head.push(['cost', 'n/a', pc.yellow(`unknown for ${r.cost_unknown_count} case(s): no price, or no usage, to bill them`)]);
  }
  if (r.usd_energy !== undefined) {
    const energy = `energy ${fmtUsd(r.usd_energy ?? null)}${r.usd_energy_source ? ` [${r.usd_energy_source}]` : ''}`;
    head.push(['cost parts', `tokens ${fmtUsd(r.usd_tokens ?? null)} · ${energy} · hardware ${fmtUsd(r.usd_hardware ?? null)}`, pc.dim('n/a: unpriced or unknown')]);
  }
  if (r.warmup_usd != null && r.warmup_usd > 0) head.push(['warmup cost', fmtUsd(r.warmup_usd), pc.dim('billed by the warmup passes, not in the cost above')]);
  if (r.prompt_tokens !== null || r.completion_tokens !== null) {
    head.push(['tokens in / out', `${r.prompt_tokens ?? 'n/a'} / ${r.completion_tokens ?? 'n/a'}`, '']);
  } else if ((r.usage_unknown_count ?? 0) > 0) {
    head.push(['tokens in / out', 'n/a', pc.yellow(`unknown for ${r.usage_unknown_count} case(s)`)]);
  }
  if (r.below_floor_count > 0) head.push(['below meter floor', String(r.below_floor_count), pc.yellow('energy noise-dominated for these cases')]);
  if (r.net_below_idle) head.push(['net below idle', 'n/a', pc.yellow(`gross < idle ${r.idle_watts} W × ${r.suite_window_ms} ms: the signal is within idle noise`)]);
  if (r.error_count > 0) head.push(['errors', String(r.error_count), pc.red('cases the target failed (counted as incorrect when scored)')]);
  if (r.energy_attribution === 'shared') {
    head.push(['energy attribution', 'shared', pc.yellow(`${r.concurrency} cases in flight: per-case energy windows overlap`)]);
  }
  if (r.throughput) {
    const t = r.throughput;
    head.push([
      'throughput',
      `${t.cases_per_s.toFixed(2)} cases/s`,
      pc.dim(`${t.output_tokens_per_s === null ? 'output tokens/s n/a' : `${t.output_tokens_per_s.toFixed(1)} output tokens/s`} over ${fmtMs(Math.round(t.wall_ms))} of scored passes`),
    ]);
  }
  if (r.retry_count > 0) head.push(['retries', String(r.retry_count), pc.dim(`${r.retry_overhead_ms} ms on failed attempts and backoff`)]);
  lines.push(table(head, ['l', 'r', 'l']), '');
  const ci = renderCiTable(r);
  if (ci) lines.push(ci, '');

  if (hasStages(r)) {
    const head = ['stage', 'cases', 'share', `energy [${r.stage_joules_source ?? r.energy_source}]`].map((h) => pc.dim(h));
    lines.push(table([head, ...stageRows(r)]));
  }
  if (Object.keys(r.by_dataset).length > 1) {
    lines.push('', table([['dataset', 'cases', 'accuracy', 'energy', 'J / correct'].map((h) => pc.dim(h)), ...datasetRows(r)]));
  }
  if (hasMtBench(r)) lines.push('', renderMtBenchTable(r).trimEnd());
  const note = SOURCE_NOTES[r.energy_source];
  if (note) lines.push('', pc.dim(`energy source ${r.energy_source}: ${note}`));
  return lines.join('\n') + '\n';
}

/** The stage table's rows: stage, cases, share, energy. */
export function stageRows(r: BenchReport): string[][] {
  const total = r.case_count || 1;
  return Object.entries(r.stage_distribution).map(([s, n]) => [s, String(n), fmtPct((n * 100) / total), fmtJoules(r.stage_joules[s] ?? null)]);
}

/** The per-dataset rows: dataset, cases, accuracy, energy, J / correct. */
export function datasetRows(r: BenchReport): string[][] {
  return Object.entries(r.by_dataset).map(([n, d]) => [n, String(d.case_count), fmtPct(d.accuracy_pct), fmtJoules(d.total_joules), fmtJoules(d.joules_per_correct)]);
}

/** How the net figure was reached, in a few words. */
function idleText(r: BenchReport): string {
  if (r.idle === 'measured') return `net = gross − idle ${r.idle_watts} W × ${r.suite_window_ms} ms`;
  if (r.idle === 'marginal') return 'marginal source: net = gross';
  return r.idle === 'skipped' ? 'no idle window (--no-idle): net unknown' : 'idle window unusable: net unknown';
}

/** A comparison for people: both sides and each change, with which direction is better and, once paired, its interval, p-value and verdict. */
export function renderComparisonTable(c: Comparison | PairedComparisonReport): string {
  const p = 'significant' in c ? c : null;
  const paired = p !== null && !p.withheld && p.paired !== null;
  const rows = comparisonRows(c);
  const head = ['metric', 'baseline', 'candidate', 'change', ...(paired ? ['95 % interval', 'p', `verdict (α = ${p.alpha})`] : [])];
  const body = rows.map((r) => [
    r.metric,
    r.baseline,
    r.candidate,
    r.change + pc.dim(`  (${r.better} is better)`),
    ...(paired ? [r.interval ?? 'n/a', r.p ?? '', r.verdict ?? 'n/a'] : []),
  ]);
  const out = [table([head.map((h) => pc.dim(h)), ...body], ['l', 'r', 'r', 'r', 'r', 'r', 'l'])];
  // Different suite digests: the changes are withheld, not unknown.
  if (p?.withheld) out.push(pc.yellow(`changes withheld: ${p.paired_reason ?? ''}`));
  else if (paired) {
    out.push(pc.dim(`  ${pairedHow(p)!}`));
    for (const r of rows) if (r.reason) out.push(pc.dim(`  ${r.metric}: no interval (${r.reason})`));
  } else if (p?.paired_reason) out.push(pc.dim(`  no interval, p-value or verdict: ${p.paired_reason}`));
  return out.join('\n') + '\n';
}

/** Why J/correct is n/a, saying what is actually unknown (never "nothing correct" when cases were correct). */
export function perCorrectUnknown(r: Pick<BenchReport, 'correct_count' | 'energy_unknown_count' | 'energy_basis_reason' | 'energy_attribution' | 'total_joules'>): string {
  if (r.correct_count === 0) return 'nothing correct';
  if (r.energy_unknown_count > 0) return `energy unknown for ${r.energy_unknown_count} case(s)`;
  if (r.energy_basis_reason) return 'total energy unknown (see above)';
  if (r.energy_attribution === 'shared') return 'total energy unknown: concurrent cases overlap and no suite window measured them';
  return 'total energy unknown';
}
