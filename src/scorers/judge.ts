import type { Scorer, Verdict } from '../core/types.js';

const PENDING: Verdict = Object.freeze({ passed: null });

/** `scorer: judge`: recorded unscored (`passed: null`) during the run; the judge (src/judge) scores it after, outside the energy windows. */
export const judgeScorer: Scorer = {
  name: 'judge',
  score() {
    return PENDING;
  },
};
