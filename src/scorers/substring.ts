import type { Scorer, Verdict } from '../core/types.js';

// Shared verdicts (frozen): a scorer runs once a case, and the runner only reads them.
const PASSED: Verdict = Object.freeze({ passed: true });
const FAILED: Verdict = Object.freeze({ passed: false });
const UNSCORED: Verdict = Object.freeze({ passed: null });

/** Case-insensitive substring match: the seed's default accuracy predicate. */
export const substringScorer: Scorer = {
  name: 'substring',
  score(c, answer) {
    if (c.expected === null) return UNSCORED;
    return answer.toLowerCase().includes(c.expected.toLowerCase()) ? PASSED : FAILED;
  },
};
