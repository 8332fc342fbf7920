import type { BenchReport } from '../core/aggregate.js';
import type { Comparison } from '../core/compare.js';
import type { FrontierReport } from '../core/frontier.js';
import type { GateFailure } from '../core/gate.js';
import { fmtJoules, fmtMs, fmtPct, fmtSigned, fmtUsd } from './format.js';

/** Escapes a table cell: pipes and newlines would break the row. */
function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

function row(cells: string[]): string {
  return `| ${cells.map(cell).join(' | ')} |`;
}

function mdTable(head: string[], rows: string[][], align?: ('l' | 'r')[]): string {
  const sep = head.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  return [row(head), `| ${sep.join(' | ')} |`, ...rows.map(row)].join('\n');
}

/** The energy figure with its source label, and a warning when some readings were below the meter floor. */
function energy(j: number | null, r: BenchReport): string {
  const floor = r.below_floor_count > 0 ? ` ⚠ ${r.below_floor_count} below floor` : '';
  return `${fmtJoules(j)} \`${r.energy_source}\`${floor}`;
}

/** A report as Markdown for a PR: headline table, stages, datasets; every energy figure labelled. */
export function renderReportMarkdown(r: BenchReport, opts: { title?: string; receipt?: Record<string, unknown> | null } = {}): string {
  const out: string[] = [];
  out.push(`### ${opts.title ?? `joulebench · ${r.suite.name}`}`);
  out.push('');
  out.push(
    `Suite \`${r.suite.name}\` ${r.suite.version} (\`${r.suite.digest.slice(0, 19)}…\`) · target \`${r.target}\` · meter \`${r.meter}\` · ` +
      `${r.case_count} cases × ${r.repeats} scored pass${r.repeats === 1 ? '' : 'es'}, ${r.warmup} warmup not scored`,
  );
  out.push('');
  const head: string[][] = [
    ['accuracy', fmtPct(r.accuracy_pct), `${r.correct_count}/${r.scored_count} scored cases correct`],
    ['J / correct', energy(r.joules_per_correct, r), r.joules_per_correct === null ? 'nothing correct or energy unknown' : 'total energy ÷ weighted correct'],
    ['total energy', energy(r.total_joules, r), ''],
    ['latency p50 / p95 / p99', `${fmtMs(r.latency_p50_ms)} / ${fmtMs(r.latency_p95_ms)} / ${fmtMs(r.latency_p99_ms)}`, 'nearest-rank, whole ms'],
  ];
  if (r.ttft_p50_ms !== null) head.push(['TTFT p50 / p95', `${r.ttft_p50_ms} / ${r.ttft_p95_ms} ms`, 'time to first token']);
  if (r.total_usd !== null) head.push(['cost', fmtUsd(r.total_usd), `${fmtUsd(r.usd_per_correct)} per correct`]);
  if (r.error_count > 0) head.push(['errors', String(r.error_count), 'cases the target failed']);
  out.push(mdTable(['metric', 'value', 'note'], head, ['l', 'r', 'l']));
  out.push('');
  const total = r.case_count || 1;
  const stages = Object.entries(r.stage_distribution).map(([s, n]) => [s, String(n), fmtPct((n * 100) / total), fmtJoules(r.stage_joules[s] ?? null)]);
  out.push(mdTable(['stage', 'cases', 'share', 'energy'], stages));
  const datasets = Object.entries(r.by_dataset);
  if (datasets.length > 1) {
    out.push('');
    out.push(
      mdTable(
        ['dataset', 'cases', 'accuracy', 'energy', 'J / correct'],
        datasets.map(([n, d]) => [n, String(d.case_count), fmtPct(d.accuracy_pct), fmtJoules(d.total_joules), fmtJoules(d.joules_per_correct)]),
      ),
    );
  }
  const rc = opts.receipt;
  if (rc) {
    out.push('');
    const host = (rc.host ?? {}) as { hostname?: string; cpu_model?: string | null };
    out.push(
      `<sub>receipt: ${String(rc.started_utc ?? '?')} → ${String(rc.finished_utc ?? '?')} · joulebench ${String(rc.joulebench_version ?? '?')} · ` +
        `node ${String(rc.node_version ?? '?')} · host ${host.hostname ?? '?'} (${host.cpu_model ?? 'cpu n/a'})</sub>`,
    );
  }
  return out.join('\n') + '\n';
}

/** A comparison as Markdown, with the gate verdict when `--fail-on` was given. */
export function renderComparisonMarkdown(c: Comparison, opts: { baseline?: string; candidate?: string; gate?: GateFailure[] | null } = {}): string {
  const out: string[] = [];
  out.push(`### joulebench compare: ${opts.baseline ?? 'baseline'} → ${opts.candidate ?? 'candidate'}`);
  out.push('');
  out.push(
    mdTable(
      ['metric', 'baseline', 'candidate', 'change', 'better'],
      [
        ['J / correct', fmtJoules(c.baseline.joules_per_correct), fmtJoules(c.candidate.joules_per_correct), fmtSigned(c.joules_per_correct_pct, ' %'), 'lower'],
        ['latency p95', fmtMs(c.baseline.latency_p95_ms), fmtMs(c.candidate.latency_p95_ms), fmtSigned(c.latency_p95_pct, ' %'), 'lower'],
        ['accuracy', fmtPct(c.baseline.accuracy_pct), fmtPct(c.candidate.accuracy_pct), fmtSigned(c.accuracy_pp_delta, ' pp'), 'higher'],
      ],
    ),
  );
  if (opts.gate) {
    out.push('');
    out.push(opts.gate.length === 0 ? '**Gate: passed.**' : `**Gate: failed** — ${opts.gate.map((f) => `\`${f.message}\``).join(', ')}`);
  }
  return out.join('\n') + '\n';
}

/** The frontier as Markdown: one table of arms with a ✓ per trade-off it is optimal on. */
export function renderFrontierMarkdown(f: FrontierReport): string {
  const mark = (axis: keyof FrontierReport['frontiers'], id: string): string => {
    const v = f.frontiers[axis].verdicts.find((x) => x.id === id);
    return v?.excluded ? 'n/a' : v?.optimal ? '✓' : '';
  };
  const rows = f.arms.map((a) => [
    a.id,
    fmtPct(a.accuracy_pct),
    `${fmtJoules(a.joules_per_correct)} \`${a.energy_source}\`${a.below_floor_count > 0 ? ' ⚠' : ''}`,
    fmtUsd(a.usd_per_correct),
    fmtMs(a.latency_p95_ms),
    mark('energy', a.id),
    mark('cost', a.id),
    mark('latency', a.id),
  ]);
  return mdTable(['arm', 'accuracy', 'J / correct', '$ / correct', 'p95', 'J front', '$ front', 'p95 front'], rows) + '\n';
}
