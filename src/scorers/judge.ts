import type { Scorer, Verdict } from '../core/types.js';

const PENDING: Verdict = Object.freeze({ passed: null });

/**
 * `scorer: judge`: an LLM judge rates the answer 1–10 (src/judge). The judge is a second model, so it
 * is asked after the run, outside the system under test's energy windows; during the run a judged
 * case is recorded unscored (`passed: null`) and the judge pass fills in `score` and `passed`.
 */
export const judgeScorer: Scorer = {
  name: 'judge',
  score() {
    return PENDING;
  },
};
