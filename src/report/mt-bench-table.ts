import { pc } from './colors.js';
import type { MtBenchBlock } from '../judge/summary.js';
import { fmtJoules, fmtUsd, mdRow as row, table } from './format.js';

/** Whether a report carries a judge's MT-Bench block. */
export function hasMtBench(r: object): r is MtBenchBlock {
  return 'mt_bench_score' in r && 'judge' in r;
}

export function fmtScore(v: number | null): string {
  return v === null ? 'n/a' : v.toFixed(2);
}

export function fmtShare(v: number | null): string {
  return v === null ? 'n/a' : `${(v * 100).toFixed(1)} %`;
}

/**
 * The judge's part of a report, for a terminal: MT-Bench score, joules per point, and the judge's
 * own energy and dollars — beside the system under test's, never added to them.
 */
export function renderMtBenchTable(r: MtBenchBlock): string {
  const j = r.judge;
  const rows: string[][] = [
    ['MT-Bench score', fmtScore(r.mt_bench_score), pc.dim(`mean case score (1–10) over ${r.mt_bench_judged_count} judged case(s)`)],
    ['J / MT-Bench point', fmtJoules(r.joules_per_mt_bench_point), pc.dim(`total energy / Σ score (${r.mt_bench_points} points)`)],
    ['correct at', `score ≥ ${r.judge_pass}`, pc.dim('--judge-pass; weight = the score (seed 000 mt_bench_score_per_correct)')],
    ['judge energy', fmtJoules(r.judge_joules), pc.dim(`[${r.judge_energy_source}] ${fmtShare(r.judge_share_joules)} of all energy; not in the totals above`)],
    ['judge cost', fmtUsd(r.judge_usd), pc.dim(`${fmtShare(r.judge_share_usd)} of all dollars; not in the totals above`)],
    ['judge', j.model, pc.dim(`${j.mode}, temperature 0, prompts ${j.prompt_hash.slice(0, 19)}…; ${j.judgements} judgements, ${j.cached} cached, ${j.requests} requests`)],
  ];
  if (j.error_count > 0 || r.mt_bench_unscored_count > 0) {
    rows.push(['judge errors', String(j.error_count), pc.yellow(`${r.mt_bench_unscored_count} judged case(s) left unscored (judge_error or no answer), never given a score`)]);
  }
  const lines = [table(rows, ['l', 'r', 'l'])];
  const cats = Object.entries(r.mt_bench_by_category);
  if (cats.length > 0) {
    const catRows: string[][] = [[pc.dim('category'), pc.dim('judged'), pc.dim('score'), pc.dim('energy'), pc.dim('J / point')]];
    for (const [name, c] of cats) catRows.push([name, `${c.judged_count}/${c.case_count}`, fmtScore(c.mt_bench_score), fmtJoules(c.total_joules), fmtJoules(c.joules_per_mt_bench_point)]);
    lines.push('', table(catRows));
  }
  return lines.join('\n') + '\n';
}

/** A text bar for a 1–10 score, ten cells wide (Markdown has no charts). */
function bar(score: number | null): string {
  if (score === null) return '';
  const full = Math.round(score);
  return '█'.repeat(full) + '░'.repeat(10 - full);
}

/** The MT-Bench part of a report as Markdown: headline, judge figures apart, and a bar per category. */
export function renderMtBenchMarkdown(r: MtBenchBlock): string {
  const j = r.judge;
  const out = [
    '#### MT-Bench (LLM judge)',
    '',
    row(['metric', 'value', 'note']),
    '| --- | ---: | --- |',
    row(['MT-Bench score', fmtScore(r.mt_bench_score), `mean case score (1–10), ${r.mt_bench_judged_count} judged${r.mt_bench_unscored_count ? `, ${r.mt_bench_unscored_count} unscored (judge_error or no answer)` : ''}`]),
    row(['J / MT-Bench point', fmtJoules(r.joules_per_mt_bench_point), `total energy ÷ Σ score (${r.mt_bench_points})`]),
    row(['correct at', `score ≥ ${r.judge_pass}`, 'weight = score (seed 000 mt_bench_score_per_correct)']),
    row(['judge energy', `${fmtJoules(r.judge_joules)} \`${r.judge_energy_source}\``, `${fmtShare(r.judge_share_joules)} of all energy; apart from the totals above`]),
    row(['judge cost', fmtUsd(r.judge_usd), `${fmtShare(r.judge_share_usd)} of all dollars; apart from the totals above`]),
    row(['judge', `\`${j.model}\``, `${j.mode}, temperature 0, prompts \`${j.prompt_hash.slice(0, 19)}…\`, ${j.judgements} judgements (${j.cached} cached)`]),
    '',
    row(['category', 'judged', 'score', '', 'J / point']),
    '| --- | ---: | ---: | --- | ---: |',
    ...Object.entries(r.mt_bench_by_category).map(([cat, c]) =>
      row([cat, `${c.judged_count}/${c.case_count}`, fmtScore(c.mt_bench_score), `\`${bar(c.mt_bench_score)}\``, fmtJoules(c.joules_per_mt_bench_point)]),
    ),
  ];
  return out.join('\n') + '\n';
}
