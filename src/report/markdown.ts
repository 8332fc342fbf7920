import { hasStages } from './stages.js';
import { datasetRows, perCorrectUnknown, stageRows } from './table.js';
import type { BenchReport } from '../core/aggregate.js';
import type { Comparison } from '../core/compare.js';
import type { PairedComparisonReport } from '../core/paired-compare.js';
import { comparisonRows, pairedHow } from './comparison-rows.js';
import type { Arm, FrontierReport } from '../core/frontier.js';
import type { GateFailure } from '../core/gate.js';
import type { CodeResults } from '../code/results.js';
import type { InferRunFile } from '../infer/protocol.js';
import { suiteEnergyText } from './suite-energy.js';
import { INFER_LEGEND, inferArmViews } from './infer-view.js';
import { fmtJoules, fmtMs, fmtPct, fmtUsd, mdTable, unscoredOf } from './format.js';
import { hasMtBench, renderMtBenchMarkdown } from './mt-bench-table.js';
import { frontierRows } from './frontier-table.js';
import { inferTargetWhere } from '../infer/where.js';

function energy(j: number | null, r: BenchReport): string {
  const floor = r.below_floor_count > 0 ? ` ⚠ ${r.below_floor_count} below floor` : '';
  return `${fmtJoules(j)} \`${r.energy_source}\`${floor}`;
}

/** The whole-suite energy row: gross with its source, net, idle watts, and how many cases have no energy. */
function wholeSuite(r: BenchReport): string[] {
  const t = suiteEnergyText(r);
  return ['whole-suite energy', `${t.gross.replace(/\[([^\]]+)\]/, '`$1`')} · ${t.net}`, [t.idle, t.net_per_correct, t.unknown].filter(Boolean).join(' · ')];
}

/** A report as Markdown for a PR: headline table, stages, datasets; every energy figure labelled. */
export function renderReportMarkdown(r: BenchReport, opts: { title?: string; receipt?: Record<string, unknown> | null } = {}): string {
  const out = [
    `### ${opts.title ?? `joulebench · ${r.suite.name}`}`,
    '',
    `Suite \`${r.suite.name}\` ${r.suite.version} (\`${r.suite.digest.slice(0, 19)}…\`) · target \`${r.target}\` · meter \`${r.meter}\` · ` +
      `${r.case_count} cases × ${r.repeats} scored pass${r.repeats === 1 ? '' : 'es'}, ${r.warmup} warmup not scored`,
    '',
  ];
  const head: string[][] = [
    ['accuracy', fmtPct(r.accuracy_pct), `${r.correct_count}/${r.scored_count} scored cases correct${(unscoredOf(r) ?? 0) > 0 ? `, ${unscoredOf(r)} unscored` : ''}`],
    ['J / correct', energy(r.joules_per_correct, r), r.joules_per_correct === null ? perCorrectUnknown(r) : 'total energy ÷ weighted correct'],
    ['total energy', energy(r.total_joules, r), ''],
    wholeSuite(r),
    ['latency p50 / p95 / p99', `${fmtMs(r.latency_p50_ms)} / ${fmtMs(r.latency_p95_ms)} / ${fmtMs(r.latency_p99_ms)}`, 'nearest-rank, whole ms'],
  ];
  if (r.ttft_p50_ms != null) head.push(['TTFT p50 / p95', `${r.ttft_p50_ms} / ${r.ttft_p95_ms} ms`, 'time to first token']);
  if (r.mean_tpot_ms != null) head.push(['TPOT mean / median / p99', `${r.mean_tpot_ms} / ${r.median_tpot_ms} / ${r.p99_tpot_ms} ms`, "time per output token after the first (vLLM's)"]);
  if (r.mean_itl_ms != null) head.push(['ITL mean / median / p99', `${r.mean_itl_ms} / ${r.median_itl_ms} / ${r.p99_itl_ms} ms`, "every gap between streamed chunks (vLLM's)"]);
  if (r.total_usd != null) head.push(['cost', fmtUsd(r.total_usd), `${fmtUsd(r.usd_per_correct)} per correct`]);
  else if ((r.cost_unknown_count ?? 0) > 0) head.push(['cost', 'n/a', `unknown for ${r.cost_unknown_count} case(s): no price, or no usage, to bill them`]);
  if (r.error_count > 0) head.push(['errors', String(r.error_count), 'cases the target failed']);
  out.push(mdTable(['metric', 'value', 'note'], head, ['l', 'r', 'l']));
  if (hasStages(r)) out.push('', mdTable(['stage', 'cases', 'share', 'energy'], stageRows(r)));
  if (Object.keys(r.by_dataset).length > 1) out.push('', mdTable(['dataset', 'cases', 'accuracy', 'energy', 'J / correct'], datasetRows(r)));
  if (hasMtBench(r)) out.push('', renderMtBenchMarkdown(r).trimEnd());
  const rc = opts.receipt;
  if (rc) {
    const host = (rc.host ?? {}) as { hostname?: string; cpu_model?: string | null };
    out.push(
      '',
      `<sub>receipt: ${String(rc.started_utc ?? '?')} → ${String(rc.finished_utc ?? '?')} · joulebench ${String(rc.joulebench_version ?? '?')} · ` +
        `node ${String(rc.node_version ?? '?')} · host ${host.hostname ?? '?'} (${host.cpu_model ?? 'cpu n/a'})</sub>`,
    );
  }
  return out.join('\n') + '\n';
}

/** A comparison as Markdown, with the gate verdict when `--fail-on` was given. */
export function renderComparisonMarkdown(c: Comparison | PairedComparisonReport, opts: { baseline?: string; candidate?: string; gate?: GateFailure[] | null } = {}): string {
  const out = [`### joulebench compare: ${opts.baseline ?? 'baseline'} → ${opts.candidate ?? 'candidate'}`, ''];
  const p = 'significant' in c ? c : null;
  const rows = comparisonRows(c).map((r) => [
    r.metric,
    r.baseline,
    r.candidate,
    r.change,
    r.better,
    ...(p ? [(r.interval ?? 'n/a') + (r.p ? ` (McNemar p = ${r.p})` : ''), r.verdict ?? 'n/a'] : []),
  ]);
  out.push(mdTable(p ? ['metric', 'baseline', 'candidate', 'change', 'better', '95 % interval of the change', `verdict (α = ${p.alpha})`] : ['metric', 'baseline', 'candidate', 'change', 'better'], rows));
  const how = p && pairedHow(p);
  if (how) out.push('', how);
  else if (p?.paired_reason) out.push('', `No intervals: ${p.paired_reason}.`);
  if (opts.gate) {
    const gate = opts.gate.length === 0 ? '**Gate: passed.**' : `**Gate: failed** — ${opts.gate.map((f) => `\`${f.message}\``).join(', ')}`;
    out.push('', gate);
  }
  return out.join('\n') + '\n';
}

/** The frontier as Markdown: one table of arms with a ✓ per trade-off it is optimal on. */
export function renderFrontierMarkdown(f: FrontierReport): string {
  const energy = (a: Arm): string => `${fmtJoules(a.joules_per_correct)} \`${a.energy_source}\`${a.below_floor_count > 0 ? ' ⚠' : ''}`;
  const rows = frontierRows(f, energy, ['n/a', '✓', '']);
  return mdTable(['arm', 'accuracy', 'J / correct', '$ / correct', 'p95', 'J front', '$ front', 'p95 front'], rows) + '\n';
}

/** A coding-agent results file as Markdown: one row per solver (an arm), resolution and energy per resolved task. */
export function renderCodeMarkdown(r: CodeResults, opts: { title?: string } = {}): string {
  const out = [
    `### ${opts.title ?? `joulebench code · ${r.suite.name}`}`,
    '',
    `Coding suite \`${r.suite.name}\`${r.suite.digest ? ` (\`${r.suite.digest.slice(0, 19)}…\`)` : ''} · ${r.suite.tasks.length} tasks · ` +
      `${r.config.rollouts} rollout${r.config.rollouts === 1 ? '' : 's'} (best-of-${r.config.rollouts}) · meter \`${r.config.meter.id}\``,
    '',
  ];
  const rows = r.solvers.map((s) => [
    s.solver,
    `${s.resolved_count}/${s.valid_task_count}`,
    fmtPct(s.resolution_pct),
    `${s.below_floor && s.joules_per_resolved !== null ? '~' : ''}${fmtJoules(s.joules_per_resolved)} \`${s.energy_source}${s.energy_basis === 'net' ? ' net' : ''}\`${s.below_floor_count > 0 ? ` ⚠ ${s.below_floor_count} below floor` : ''}`,
    fmtUsd(s.usd_per_resolved),
    s.median_wall_ms === null ? 'n/a' : `${Math.round(s.median_wall_ms)} ms`,
    String(s.invalid_count),
    [s.pareto_energy ? 'E' : '', s.pareto_usd ? '$' : ''].filter(Boolean).join(' ') || '',
  ]);
  out.push(mdTable(['solver (arm)', 'resolved', 'resolution', 'J / resolved', '$ / resolved', 'median wall', 'invalid', 'frontier'], rows), '');
  out.push('<sub>resolution = accuracy of a solver arm (resolved ÷ valid tasks); J and $ per resolved task are its J and $ per correct; n/a = unknown or nothing resolved; ~ = below the meter floor</sub>');
  return out.join('\n') + '\n';
}

/** An infer run file as Markdown: one row per arm (model × threads). No accuracy: nothing is graded. */
export function renderInferMarkdown(label: string, file: InferRunFile, opts: { title?: string } = {}): string {
  const out = [
    `### ${opts.title ?? `joulebench infer · ${label}`}`,
    '',
    `Prompt \`sha256:${file.prompt_sha256.slice(0, 12)}…\` · ${file.target.kind} ${inferTargetWhere(file.target)} · ` +
      `${file.started_utc} → ${file.finished_utc}`,
    '',
  ];
  const n = (v: number | null | undefined, digits = 2): string => (v === null || v === undefined ? 'n/a' : v.toFixed(digits));
  const views = inferArmViews(label, file);
  const rows = views.map((a) => [
    a.id,
    n(a.decode_tok_s_median),
    a.decode_spread === null ? 'n/a' : `${(a.decode_spread * 100).toFixed(2)} %`,
    n(a.prefill_tok_s_cold, 1),
    n(a.first_token?.cached_prefix_ms.value),
    n(a.first_token?.fresh_prompt_model_loaded_ms.value),
    n(a.first_token?.fully_cold_ms.value),
    a.j_per_decoded_token === null ? 'n/a' : `${a.j_per_decoded_token.toPrecision(3)} \`${a.energy_source}\``,
    [a.contaminated ? 'CONTAMINATED' : '', a.receipt].filter(Boolean).join(', '),
  ]);
  out.push(
    mdTable(['arm', 'decode tok/s', 'spread', 'cold prefill tok/s', 'cached-prefix ms', 'fresh, loaded ms', 'fully cold ms', 'J / decoded token', 'receipt'], rows),
  );
  const flags = views.flatMap((a) => a.flags.map((f) => `- ${a.id}: ${f}`));
  if (flags.length) out.push('', ...flags);
  out.push('', `<sub>${[...INFER_LEGEND, 'no accuracy: an infer arm is not on the accuracy frontiers'].join(' · ')}</sub>`);
  return out.join('\n') + '\n';
}
