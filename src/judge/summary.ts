import { bootstrapCi, meanStatistic, type IntervalResult } from '../stats/index.js';
import type { BenchReport } from '../core/aggregate.js';
import { round } from '../core/stats.js';
import type { CaseResult } from '../core/types.js';
import type { PromptSetLabel } from './prompt-set.js';
import type { CaseJudging, JudgeTally, PairVerdict } from './score.js';

/** joulebench's own judge prompts: not FastChat's, so their scores are not comparable with published ones. */
export const BUILTIN_PROMPTS_LABEL: PromptSetLabel = { source: 'builtin', path: null, sha256: null, comparable: false };

/** MT-Bench figures for one category (or the whole run). */
export interface MtBenchSlice {
  case_count: number;
  judged_count: number;
  /** Mean case score (1–10) over judged cases; null when none was judged. */
  mt_bench_score: number | null;
  /** Σ case score: the denominator of joules per point. */
  points: number;
  total_joules: number | null;
  /** total_joules / Σ score; null when either is unknown or no point was scored. */
  joules_per_mt_bench_point: number | null;
}

/** The judge's identity and what judging cost, always apart from the system under test's figures. */
export interface JudgeInfo {
  model: string;
  mode: string;
  prompt_hash: string;
  /** Which prompt set judged: only FastChat's own file is comparable with MT-Bench's published scores. */
  prompts: PromptSetLabel;
  /** The correctness threshold on the 1–10 score. */
  pass: number;
}

/** One row of the per-turn table: the mean 1–10 rating over `count` ratings, with its interval. */
export interface TurnScore {
  score: number | null;
  count: number;
  ci: IntervalResult;
}

/** The report block added by a judge (`single`/`single-reference`): MT-Bench score and joules per point. */
export interface MtBenchBlock {
  mt_bench_score: number | null;
  /** Percentile bootstrap 95 % interval of the mean score over judged cases (seeded from the suite digest); a reason when under 2 were judged. */
  mt_bench_score_ci: IntervalResult;
  mt_bench_judged_count: number;
  /** Judged cases left without a score (a judge_error, or no answer from the target). */
  mt_bench_unscored_count: number;
  mt_bench_points: number;
  /** The per-turn table as FastChat's show_result.py makes it, with bootstrap intervals (cases rated turn by turn only). */
  mt_bench_turns: { turn_1: TurnScore; turn_2: TurnScore; average: TurnScore };
  joules_per_mt_bench_point: number | null;
  judge_pass: number;
  mt_bench_by_category: Record<string, MtBenchSlice>;
  judge: JudgeInfo & { temperature: 0; judgements: number; cached: number; requests: number; error_count: number };
  judge_joules: number | null;
  judge_energy_source: string;
  judge_usd: number | null;
  judge_prompt_tokens: number | null;
  judge_completion_tokens: number | null;
  /** judge_joules / (judge_joules + total_joules): the judge's part of all energy spent. */
  judge_share_joules: number | null;
  judge_share_usd: number | null;
}

/** The MT-Bench block of a judged run: `joules_per_mt_bench_point = total_joules / Σ score`; the judge's own cost beside it, never in it. */
export function mtBenchBlock(results: readonly CaseResult[], report: BenchReport, tally: JudgeTally, info: JudgeInfo): MtBenchBlock {
  const judgedCases = results.filter((r) => r.phase === 'scored' && isJudged(r));
  const byCat = new Map<string, CaseResult[]>();
  for (const r of judgedCases) {
    const list = byCat.get(r.dataset) ?? [];
    list.push(r);
    byCat.set(r.dataset, list);
  }
  const whole = slice(judgedCases, report.total_joules);
  const byCategory = Object.fromEntries(
    [...byCat.keys()].sort().map((cat) => [cat, slice(byCat.get(cat)!, report.by_dataset[cat]?.total_joules ?? null)]),
  );
  const judgeJ = tally.joules === null ? null : round(tally.joules);
  const judgeUsd = tally.usd === null ? null : round(tally.usd, 9);
  return {
    mt_bench_score: whole.mt_bench_score,
    mt_bench_score_ci: meanCi(scoresOf(judgedCases), `${report.suite.digest}:mt-bench-score`, 'judged case(s)'),
    mt_bench_judged_count: whole.judged_count,
    mt_bench_unscored_count: whole.case_count - whole.judged_count,
    mt_bench_points: whole.points,
    mt_bench_turns: turnScores(judgedCases, report.suite.digest),
    joules_per_mt_bench_point: whole.joules_per_mt_bench_point,
    judge_pass: info.pass,
    mt_bench_by_category: byCategory,
    judge: { ...info, temperature: 0, judgements: tally.judgements, cached: tally.cached, requests: tally.requests, error_count: tally.errors },
    judge_joules: judgeJ,
    judge_energy_source: judgeJ === null ? 'none' : tally.energy_sources.length === 1 ? tally.energy_sources[0]! : tally.energy_sources.length === 0 ? 'none' : 'mixed',
    judge_usd: judgeUsd,
    judge_prompt_tokens: tally.prompt_tokens,
    judge_completion_tokens: tally.completion_tokens,
    judge_share_joules: share(judgeJ, report.total_joules),
    judge_share_usd: share(judgeUsd, report.total_usd),
  };
}

/** A judged case carries `meta.judge` (see judgeResults). */
function isJudged(r: CaseResult): boolean {
  return r.meta !== undefined && typeof r.meta.judge === 'object' && r.meta.judge !== null;
}

function scoresOf(rs: readonly CaseResult[]): number[] {
  return rs.map((r) => r.score).filter((s): s is number => s !== null);
}

function slice(rs: readonly CaseResult[], total_joules: number | null): MtBenchSlice {
  const scores = scoresOf(rs);
  const points = round(scores.reduce((t, s) => t + s, 0), 4);
  return {
    case_count: rs.length,
    judged_count: scores.length,
    mt_bench_score: scores.length === 0 ? null : round(points / scores.length, 4),
    points,
    total_joules,
    joules_per_mt_bench_point: total_joules === null || points === 0 ? null : round(total_joules / points),
  };
}

function share(part: number | null, rest: number | null): number | null {
  if (part === null || rest === null || part + rest === 0) return null;
  return round(part / (part + rest), 6);
}

/** The report of a pairwise comparison: wins per run counted per compared turn, both orders agreeing. */
export interface PairwiseBlock {
  judge: JudgeInfo & { temperature: 0; judgements: number; cached: number; requests: number; error_count: number };
  turns_compared: number;
  a_wins: number;
  b_wins: number;
  ties: number;
  /** Turns with a judge_error in either order: neither a win nor a tie. */
  undecided: number;
  /** Orders that disagreed (each counted as a tie): how much position swayed the judge. */
  inconsistent: number;
  /** (a_wins + ties / 2) / decided turns; null when none was decided. */
  a_win_rate: number | null;
  by_category: Record<string, { a_wins: number; b_wins: number; ties: number; undecided: number }>;
  judge_joules: number | null;
  judge_usd: number | null;
  verdicts: PairVerdict[];
}

/** Where a compared turn's winner is counted. */
const WIN_KEY = { a: 'a_wins', b: 'b_wins', tie: 'ties' } as const;

export function pairwiseBlock(verdicts: PairVerdict[], tally: JudgeTally, info: JudgeInfo): PairwiseBlock {
  const all = { a_wins: 0, b_wins: 0, ties: 0, undecided: 0 };
  let inconsistent = 0;
  const byCat: PairwiseBlock['by_category'] = {};
  for (const v of verdicts) {
    const cat = (byCat[v.dataset] ??= { a_wins: 0, b_wins: 0, ties: 0, undecided: 0 });
    const tick = (k: keyof typeof all): void => {
      all[k]++;
      cat[k]++;
    };
    if (v.turns.length === 0) tick('undecided');
    for (const t of v.turns) {
      if (t.winner !== null && t.a_first !== t.b_first) inconsistent++;
      tick(t.winner === null ? 'undecided' : WIN_KEY[t.winner]);
    }
  }
  const { a_wins, b_wins, ties, undecided } = all;
  const decided = a_wins + b_wins + ties;
  return {
    judge: { ...info, temperature: 0, judgements: tally.judgements, cached: tally.cached, requests: tally.requests, error_count: tally.errors },
    turns_compared: decided + undecided,
    a_wins,
    b_wins,
    ties,
    undecided,
    inconsistent,
    a_win_rate: decided === 0 ? null : round((a_wins + ties / 2) / decided, 6),
    by_category: Object.fromEntries(Object.keys(byCat).sort().map((k) => [k, byCat[k]!])),
    judge_joules: tally.joules === null ? null : round(tally.joules),
    judge_usd: tally.usd === null ? null : round(tally.usd, 9),
    verdicts,
  };
}

/** Per-turn ratings of the cases rated turn by turn, pooled as FastChat's show_result.py pools them. */
function turnScores(rs: readonly CaseResult[], seed: string): MtBenchBlock['mt_bench_turns'] {
  const turns: number[][] = [[], []];
  for (const r of rs) {
    const j = r.meta!.judge as Partial<CaseJudging>;
    if (!Array.isArray(j.ratings) || !(j.per_turn ?? j.ratings.length > 1)) continue;
    j.ratings.forEach((v, i) => {
      if (typeof v === 'number') (turns[i] ??= []).push(v);
    });
  }
  const row = (xs: number[], name: string): TurnScore => ({
    score: xs.length === 0 ? null : round(xs.reduce((t, v) => t + v, 0) / xs.length, 4),
    count: xs.length,
    ci: meanCi(xs, `${seed}:mt-bench-${name}`, 'rating(s)'),
  });
  return { turn_1: row(turns[0]!, 'turn-1'), turn_2: row(turns[1]!, 'turn-2'), average: row(turns.flat(), 'turn-average') };
}

/** The percentile bootstrap interval of the mean of `xs` (`unit`: what they are), or why there is none. */
function meanCi(xs: readonly number[], seed: string, unit: string): IntervalResult {
  return xs.length < 2 ? { reason: `${xs.length} ${unit}: an interval needs at least 2` } : bootstrapCi(xs.length, meanStatistic(xs), { seed });
}
