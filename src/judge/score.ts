import { JoulebenchError } from '../core/errors.js';
import type { Case, CaseResult, ScorerName } from '../core/types.js';
import type { CachedJudgement } from './cache.js';
import type { Judge } from './judge.js';
import { REFERENCE_CATEGORIES } from '../suites/mt-bench.js';
import { fastChatPrompt } from './prompt-set.js';
import { comparePrompt, ratingPrompt } from './prompts.js';

/** What the judgements behind a scoring cost, summed; each figure null when any judgement's is unknown. */
export interface JudgeTally {
  /** Judgements used (one per rated turn, two per compared turn). */
  judgements: number;
  /** Of those, taken from the cache: nothing was asked for them now. */
  cached: number;
  /** Requests sent now (a retried verdict counts twice). */
  requests: number;
  /** Judgements that ended as `judge_error`. */
  errors: number;
  joules: number | null;
  energy_sources: string[];
  usd: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

function emptyTally(): JudgeTally {
  return { judgements: 0, cached: 0, requests: 0, errors: 0, joules: 0, energy_sources: [], usd: 0, prompt_tokens: 0, completion_tokens: 0 };
}

function count(t: JudgeTally, j: CachedJudgement, cached: boolean): void {
  t.judgements++;
  if (cached) t.cached++;
  else t.requests += j.requests;
  if (j.error) t.errors++;
  t.joules = t.joules === null || j.joules === null ? null : t.joules + j.joules;
  if (j.joules !== null && !t.energy_sources.includes(j.energy_source)) t.energy_sources.push(j.energy_source);
  t.usd = t.usd === null || j.cost_usd === null ? null : t.usd + j.cost_usd;
  t.prompt_tokens = t.prompt_tokens === null || j.prompt_tokens === null ? null : t.prompt_tokens + j.prompt_tokens;
  t.completion_tokens = t.completion_tokens === null || j.completion_tokens === null ? null : t.completion_tokens + j.completion_tokens;
}

/** The per-case record of a judging, kept in the result's `meta.judge`. */
export interface CaseJudging {
  mode: string;
  /** One rating per judged turn (or one for an answer to all turns at once); null where the judge erred. */
  ratings: (number | null)[];
  /** Each rating is one turn's (false: one answer to all turns, rated once). */
  per_turn: boolean;
  prompts: string[];
  /** The judge's whole reply to each prompt (its explanation and verdict), beside `ratings`; null where the request failed. */
  replies: (string | null)[];
  error: string | null;
}

/** The questions a case asks, turn by turn. */
function questionsOf(c: Case): string[] {
  return c.turns && c.turns.length > 0 ? c.turns : [c.prompt ?? ''];
}

/** The answers a result holds: one per turn when it was asked as a conversation, else its one response. */
function answersOf(r: CaseResult): string[] | null {
  if (r.turns && r.turns.length > 0 && r.turns.every((t) => typeof t.response === 'string')) return r.turns.map((t) => t.response!);
  return r.response === null ? null : [r.response];
}

interface JudgeResultsOptions {
  results: readonly CaseResult[];
  /** The suite's cases by id (the questions and references the results file does not hold). */
  cases: ReadonlyMap<string, Case>;
  suiteScorer: ScorerName;
  judge: Judge;
  /** A case is correct at a score at or above this (MT-Bench points, default 7). */
  pass: number;
  onCase?: (done: number, total: number) => void;
}

/** Scores judged cases: `score` (and `weight`) the mean 1–10 turn rating, `passed` at `score ≥ pass`; a judge_error leaves it unscored. */
export async function judgeResults(o: JudgeResultsOptions): Promise<{ results: CaseResult[]; tally: JudgeTally }> {
  if (o.judge.mode === 'pairwise') throw new JoulebenchError('E_USAGE', 'pairwise judging compares two runs: use rescore with --against');
  const tally = emptyTally();
  const judged = new Set(o.results.filter((r) => r.phase === 'scored' && scorerOf(r, o) === 'judge'));
  if (o.judge.prompts.entries) checkFastChatCases([...judged].map((r) => caseFor(r, o.cases)));
  let done = 0;
  const out: CaseResult[] = [];
  for (const r of o.results) {
    if (!judged.has(r)) {
      out.push(r);
      continue;
    }
    const c = caseFor(r, o.cases);
    const answers = r.error === null ? answersOf(r) : null;
    const next: CaseResult = { ...r };
    if (answers === null) {
      next.passed = false;
      next.score = null;
      next.meta = { ...r.meta, judge: { mode: o.judge.mode, ratings: [], per_turn: false, prompts: [], replies: [], error: 'no answer to judge (the target failed)' } satisfies CaseJudging };
      out.push(next);
      o.onCase?.(++done, judged.size);
      continue;
    }
    const questions = questionsOf(c);
    const perTurn = questions.length > 1 && answers.length === questions.length;
    const fastchat = o.judge.prompts.entries !== null;
    // FastChat's prompts give the reference by category, whatever the mode; the builtin ones in single-reference mode.
    const reference = fastchat || o.judge.mode === 'single-reference' ? c.reference : undefined;
    const ask = (q: readonly string[], a: readonly string[]) =>
      fastchat
        ? fastChatPrompt(o.judge.prompts, { category: c.dataset, questions: q, answers: a, ...(reference ? { reference } : {}) })
        : ratingPrompt({ questions: q, answers: a, ...(reference ? { reference: reference.slice(0, q.length) } : {}) });
    // Asked as one prompt, the one answer is rated against all the turns at once.
    const asks = perTurn ? questions.map((_, k) => ask(questions.slice(0, k + 1), answers.slice(0, k + 1))) : [ask(fastchat ? [questions.join('\n\n')] : questions, answers)];
    const ratings: (number | null)[] = [];
    const replies: (string | null)[] = [];
    let error: string | null = null;
    for (const a of asks) {
      const { judgement, cached } = await o.judge.ask(a.messages, 'rating');
      count(tally, judgement, cached);
      ratings.push(judgement.rating);
      replies.push(judgement.text);
      if (judgement.error && error === null) error = judgement.error.message;
    }
    const known = ratings.filter((v): v is number => v !== null);
    if (error !== null || known.length !== ratings.length) {
      next.passed = null;
      next.score = null;
    } else {
      const score = Math.round((known.reduce((s, v) => s + v, 0) / known.length) * 10000) / 10000;
      next.score = score;
      next.weight = score;
      next.passed = score >= o.pass;
    }
    next.meta = { ...r.meta, judge: { mode: o.judge.mode, ratings, per_turn: perTurn || questions.length === 1, prompts: asks.map((a) => a.kind), replies, error } satisfies CaseJudging };
    out.push(next);
    o.onCase?.(++done, judged.size);
  }
  return { results: out, tally };
}

/** Before anything is asked: FastChat's prompts judge one or two turns, and a reference category needs its references. */
function checkFastChatCases(cases: readonly Case[]): void {
  for (const c of cases) {
    const turns = questionsOf(c).length;
    if (turns > 2) throw new JoulebenchError('E_USAGE', `case "${c.id}" has ${turns} turns: FastChat's judge prompts rate one or two (use judge.prompts: builtin)`);
    if (REFERENCE_CATEGORIES.has(c.dataset) && (c.reference?.length ?? 0) < turns) {
      throw new JoulebenchError('E_USAGE', `case "${c.id}" (${c.dataset}) has no reference answer for each turn: FastChat judges ${c.dataset} against one (give --references reference.jsonl)`);
    }
  }
}

function scorerOf(r: CaseResult, o: JudgeResultsOptions): ScorerName {
  return o.cases.get(r.case_id)?.scorer ?? o.suiteScorer;
}

function caseFor(r: CaseResult, cases: ReadonlyMap<string, Case>): Case {
  const c = cases.get(r.case_id);
  if (!c) throw new JoulebenchError('E_RESULTS', `case "${r.case_id}" is not in the suite given (its questions are needed to judge it)`);
  return c;
}

/** One question compared in both orders. `winner` is a run ('a', 'b') only when both orders agree; otherwise a tie. */
export interface PairVerdict {
  case_id: string;
  dataset: string;
  /** Per compared turn: the verdict with run A shown first, then with run B shown first (already mapped to runs). */
  turns: { a_first: 'a' | 'b' | 'tie' | null; b_first: 'a' | 'b' | 'tie' | null; winner: 'a' | 'b' | 'tie' | null }[];
  error: string | null;
}

/** Pairwise: each pair judged in both orders (against position bias); a win needs both, disagreement is a tie. */
export async function judgePairwise(o: {
  a: readonly CaseResult[];
  b: readonly CaseResult[];
  cases: ReadonlyMap<string, Case>;
  judge: Judge;
}): Promise<{ verdicts: PairVerdict[]; tally: JudgeTally }> {
  const tally = emptyTally();
  if (o.judge.prompts.entries) checkFastChatCases(o.a.filter((r) => r.phase === 'scored').map((r) => caseFor(r, o.cases)));
  const bById = new Map(o.b.filter((r) => r.phase === 'scored').map((r) => [r.case_id, r]));
  const verdicts: PairVerdict[] = [];
  for (const ra of o.a) {
    if (ra.phase !== 'scored') continue;
    const rb = bById.get(ra.case_id);
    if (!rb) continue;
    const c = caseFor(ra, o.cases);
    const questions = questionsOf(c);
    const ansA = ra.error === null ? answersOf(ra) : null;
    const ansB = rb.error === null ? answersOf(rb) : null;
    if (!ansA || !ansB) {
      verdicts.push({ case_id: ra.case_id, dataset: ra.dataset, turns: [], error: 'a run has no answer to compare (its target failed)' });
      continue;
    }
    const perTurn = questions.length > 1 && ansA.length === questions.length && ansB.length === questions.length;
    const ks = perTurn ? questions.map((_, k) => k + 1) : [questions.length];
    const v: PairVerdict = { case_id: ra.case_id, dataset: ra.dataset, turns: [], error: null };
    for (const k of ks) {
      const q = perTurn ? questions.slice(0, k) : questions;
      const [xa, xb] = perTurn ? [ansA.slice(0, k), ansB.slice(0, k)] : [ansA, ansB];
      const pair = (x: readonly string[], y: readonly string[]) =>
        o.judge.prompts.entries
          ? fastChatPrompt(o.judge.prompts, { category: c.dataset, questions: perTurn ? q : [q.join('\n\n')], answers: x, answersB: y, ...(c.reference ? { reference: c.reference } : {}) })
          : comparePrompt({ questions: q, answersA: x, answersB: y });
      const first = await o.judge.ask(pair(xa, xb).messages, 'choice');
      const second = await o.judge.ask(pair(xb, xa).messages, 'choice');
      count(tally, first.judgement, first.cached);
      count(tally, second.judgement, second.cached);
      const aFirst = mapChoice(first.judgement.choice, false);
      const bFirst = mapChoice(second.judgement.choice, true);
      const winner = aFirst === null || bFirst === null ? null : aFirst === bFirst ? aFirst : 'tie';
      v.turns.push({ a_first: aFirst, b_first: bFirst, winner });
      const err = first.judgement.error ?? second.judgement.error;
      if (err && v.error === null) v.error = err.message;
    }
    verdicts.push(v);
  }
  return { verdicts, tally };
}

/** A position verdict mapped to the run it names; `swapped`: run B was shown as assistant A. */
function mapChoice(choice: 'A' | 'B' | 'C' | null, swapped: boolean): 'a' | 'b' | 'tie' | null {
  if (choice === null) return null;
  if (choice === 'C') return 'tie';
  return (choice === 'A') !== swapped ? 'a' : 'b';
}
