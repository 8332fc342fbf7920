import type { Scorer } from '../core/types.js';

/** Exact match after trimming surrounding whitespace; case-sensitive. */
export const exactScorer: Scorer = {
  name: 'exact',
  score(c, answer) {
    if (c.expected === null) return { passed: null };
    return { passed: answer.trim() === c.expected.trim() };
  },
};
