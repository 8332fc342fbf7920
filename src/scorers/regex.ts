import { RE2JS } from 're2js';
import type { Scorer } from '../core/types.js';

const compiled = new Map<string, RE2JS>();

/** Compiles an expected answer with RE2 (`re2js`: linear time, so `^(a+)+$` cannot stall a run); throws its syntax error. */
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
