import { RE2JS } from 're2js';
import type { Scorer } from '../core/types.js';

const compiled = new Map<string, RE2JS>();

/**
 * Compiles an expected answer with RE2 semantics (the `re2js` engine: linear time in the answer's
 * length, so a pattern such as `^(a+)+$` cannot stall a run). RE2 syntax: no backreferences and no
 * lookaround. Throws the engine's syntax error; the suite loader turns it into a line naming the case.
 */
export function compileExpected(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
    compiled.set(pattern, re);
  }
  return re;
}

/** `expected` is a regular expression (RE2 syntax, case-insensitive) searched for in the answer. */
export const regexScorer: Scorer = {
  name: 'regex',
  score(c, answer) {
    if (c.expected === null) return { passed: null };
    const m = compileExpected(c.expected).matcher(answer);
    const found = m.find();
    return { passed: found, extracted: found ? m.group(0) : null };
  },
};
