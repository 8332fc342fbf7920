import { pc } from './colors.js';
import type { JudgeInfo, MtBenchBlock, TurnScore } from '../judge/summary.js';
import type { LeaderboardRow } from '../judge/fastchat-judgments.js';
import { isInterval } from '../stats/interval.js';
import { fmtJoules, fmtUsd, mdTable, table } from './format.js';

/** Whether a report carries a judge's MT-Bench block. */
export function hasMtBench(r: object): r is MtBenchBlock {
  return 'mt_bench_score' in r && 'judge' in r;
}

export const fmtScore = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(2));
export const fmtShare = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(1)} %`);

/** A turn's score with its interval: `7.12 [6.80, 7.41]`, or the score alone when there is none. */
export function fmtTurn(t: TurnScore | undefined): string {
  if (!t) return 'n/a';
  const ci = isInterval(t.ci) && t.ci.method !== 'degenerate' ? ` [${fmtScore(t.ci.low)}, ${fmtScore(t.ci.high)}]` : '';
  return fmtScore(t.score) + ci;
}

/** Which prompts judged, in words: only FastChat's own file makes the scores comparable with MT-Bench's published ones. */
export function promptsText(j: JudgeInfo): string {
  const p = j.prompts;
  if (!p || p.source === 'builtin') return "joulebench's own prompts: not comparable with published MT-Bench scores";
  if (p.source === 'fastchat') return "FastChat's judge_prompts.jsonl (pinned sha256): comparable with published MT-Bench scores by the same judge model";
  return `prompts file ${p.path} (sha256 ${p.sha256?.slice(0, 12)}…, not FastChat's pinned one): not comparable`;
}

/** The per-turn rows (turn 1, turn 2, average) of a report judged turn by turn; none when no case was (or for an older report). */
function turnRows(r: MtBenchBlock): [string, string, string][] {
  const t = r.mt_bench_turns;
  if (!t || t.average.count === 0) return [];
  return [
    ['turn 1', fmtTurn(t.turn_1), `${t.turn_1.count} rating(s), 95 % bootstrap interval`],
    ['turn 2', fmtTurn(t.turn_2), `${t.turn_2.count} rating(s)`],
    ['turn average', fmtTurn(t.average), 'mean of all turn ratings, as the MT-Bench leaderboard averages'],
  ];
}

/** The judge's part of a report for a terminal; its energy and dollars stand beside the system's, never added to them. */
export function renderMtBenchTable(r: MtBenchBlock): string {
  const j = r.judge;
  const rows: string[][] = [
    ['MT-Bench score', fmtScore(r.mt_bench_score), pc.dim(`mean case score (1–10) over ${r.mt_bench_judged_count} judged case(s)`)],
    ['J / MT-Bench point', fmtJoules(r.joules_per_mt_bench_point), pc.dim(`total energy / Σ score (${r.mt_bench_points} points)`)],
    ...turnRows(r).map(([a, b, c]) => [a, b, pc.dim(c)]),
    ['correct at', `score ≥ ${r.judge_pass}`, pc.dim('--judge-pass; weight = the score (points per correct case)')],
    ['judge energy', fmtJoules(r.judge_joules), pc.dim(`[${r.judge_energy_source}] ${fmtShare(r.judge_share_joules)} of all energy; not in the totals above`)],
    ['judge cost', fmtUsd(r.judge_usd), pc.dim(`${fmtShare(r.judge_share_usd)} of all dollars; not in the totals above`)],
    ['judge', j.model, pc.dim(`${j.mode}, temperature 0, prompts ${j.prompt_hash.slice(0, 19)}…; ${j.judgements} judgements, ${j.cached} cached, ${j.requests} requests`)],
    ['judge prompts', j.prompts?.source ?? 'builtin', j.prompts?.comparable ? pc.dim(promptsText(j)) : pc.yellow(promptsText(j))],
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
  const rows = [
    ['MT-Bench score', fmtScore(r.mt_bench_score), `mean case score (1–10), ${r.mt_bench_judged_count} judged${r.mt_bench_unscored_count ? `, ${r.mt_bench_unscored_count} unscored (judge_error or no answer)` : ''}`],
    ['J / MT-Bench point', fmtJoules(r.joules_per_mt_bench_point), `total energy ÷ Σ score (${r.mt_bench_points})`],
    ...turnRows(r),
    ['correct at', `score ≥ ${r.judge_pass}`, 'weight = score (points per correct case)'],
    ['judge energy', `${fmtJoules(r.judge_joules)} \`${r.judge_energy_source}\``, `${fmtShare(r.judge_share_joules)} of all energy; apart from the totals above`],
    ['judge cost', fmtUsd(r.judge_usd), `${fmtShare(r.judge_share_usd)} of all dollars; apart from the totals above`],
    ['judge', `\`${j.model}\``, `${j.mode}, temperature 0, prompts \`${j.prompt_hash.slice(0, 19)}…\`, ${j.judgements} judgements (${j.cached} cached)`],
    ['judge prompts', j.prompts?.source ?? 'builtin', promptsText(j)],
  ];
  const cats = Object.entries(r.mt_bench_by_category).map(([cat, c]) =>
    [cat, `${c.judged_count}/${c.case_count}`, fmtScore(c.mt_bench_score), `\`${bar(c.mt_bench_score)}\``, fmtJoules(c.joules_per_mt_bench_point)],
  );
  const out = [
    '#### MT-Bench (LLM judge)',
    '',
    mdTable(['metric', 'value', 'note'], rows, ['l', 'r', 'l']),
    '',
    mdTable(['category', 'judged', 'score', '', 'J / point'], cats, ['l', 'r', 'r', 'l', 'r']),
  ];
  return out.join('\n') + '\n';
}

/** The per-model table: first turn, second turn, average, to 4 decimals. */
export function renderLeaderboard(rows: readonly LeaderboardRow[]): string {
  const f = (v: number | null) => (v === null ? 'n/a' : v.toFixed(4));
  const out: string[][] = [[pc.dim('model'), pc.dim('turn 1'), pc.dim('turn 2'), pc.dim('average'), pc.dim('ratings'), pc.dim('from')]];
  for (const r of rows) out.push([r.model, f(r.turn_1), f(r.turn_2), f(r.average), String(r.ratings), pc.dim(r.source)]);
  return table(out, ['l', 'r', 'r', 'r', 'r', 'l']) + '\n';
}
