import type { Scorer } from '../core/types.js';

const compiled = new Map<string, RegExp>();

/** `expected` is a regular expression (JavaScript syntax, case-insensitive) tested against the answer. */
export const regexScorer: Scorer = {
  name: 'regex',
  score(c, answer) {
    if (c.expected === null) return { passed: null };
    let re = compiled.get(c.expected);
    if (!re) {
      re = new RegExp(c.expected, 'i');
      compiled.set(c.expected, re);
    }
    const m = re.exec(answer);
    return { passed: m !== null, extracted: m ? m[0] : null };
  },
};
