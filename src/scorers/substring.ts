import type { Scorer } from '../core/types.js';

/** Case-insensitive substring match: the seed's default accuracy predicate. */
export const substringScorer: Scorer = {
  name: 'substring',
  score(c, answer) {
    if (c.expected === null) return { passed: null };
    return { passed: answer.toLowerCase().includes(c.expected.toLowerCase()) };
  },
};
