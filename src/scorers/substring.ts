import type { Scorer, Verdict } from '../core/types.js';

// Shared verdicts (frozen): a scorer runs once a case, and the runner only reads them.
const PASSED: Verdict = Object.freeze({ passed: true });
const FAILED: Verdict = Object.freeze({ passed: false });
const UNSCORED: Verdict = Object.freeze({ passed: null });

/** A letter, digit, combining mark or underscore: the characters a token is made of. */
const WORD = /[\p{L}\p{N}\p{M}_]/u;
const DIGIT = /\p{Nd}/u;

/**
 * Case-insensitive substring match on token boundaries (the seed's default predicate, made so a wordy
 * reply cannot game it): the expected text must not continue a token on either side, so `11` does
 * not match `tok11` or `110` and `yes` does not match `yesterday`. An expected answer that starts or
 * ends with a digit matches only a whole number: `4` does not match `4.5`, `3.4`, `1,400`, `-4`, `40`,
 * `4e3`, `4/5` or `3/4`, and does match `4.` and `4,` ending a sentence or clause.
 * Edges of the expected text that are not word characters (`C++`) need no boundary on that side.
 */
export const substringScorer: Scorer = {
  name: 'substring',
  score(c, answer) {
    if (c.expected === null) return UNSCORED;
    return containsToken(answer.toLowerCase(), c.expected.toLowerCase()) ? PASSED : FAILED;
  },
};

/** True when `needle` occurs in `haystack` with a token boundary on each word-character edge. */
export function containsToken(haystack: string, needle: string): boolean {
  if (needle.length === 0) return true;
  const checkStart = isAt(WORD, needle, 0);
  const checkEnd = isBefore(WORD, needle, needle.length);
  const numStart = isAt(DIGIT, needle, 0);
  const numEnd = isBefore(DIGIT, needle, needle.length);
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if (checkStart && !boundaryBefore(haystack, at, numStart)) continue;
    if (checkEnd && !boundaryAfter(haystack, end, numEnd)) continue;
    return true;
  }
  return false;
}

function boundaryBefore(s: string, at: number, numeric: boolean): boolean {
  if (at === 0) return true;
  const prev = charBefore(s, at);
  if (WORD.test(prev)) return false;
  if (!numeric) return true;
  const before = at - prev.length;
  // `3.4`, `1,400`, `3/4`: the expected number would be the tail of a longer one (or a fraction's denominator).
  if ((prev === '.' || prev === ',' || prev === '/' || prev === '\u2044') && before > 0 && isBefore(DIGIT, s, before)) return false;
  // `-4`, `−4`: a sign makes another number (a hyphen inside a word, `ISO-4`, is not a sign).
  if ((prev === '-' || prev === '\u2212' || prev === '+') && (before === 0 || !isBefore(WORD, s, before))) return false;
  return true;
}

function boundaryAfter(s: string, end: number, numeric: boolean): boolean {
  if (end >= s.length) return true;
  if (isAt(WORD, s, end)) return false;
  // `4.5`, `4,000`, `4/5`: the expected number would be the head of a longer one (or a fraction's numerator).
  const next = s.charCodeAt(end);
  if (numeric && (next === 0x2e || next === 0x2c || next === 0x2f || next === 0x2044) && end + 1 < s.length && isAt(DIGIT, s, end + 1)) return false;
  return true;
}

/** Whether the code point at `i` is a word character (`WORD`) or a digit (`DIGIT`). */
function isAt(re: RegExp, s: string, i: number): boolean {
  return re.test(String.fromCodePoint(s.codePointAt(i) ?? 0));
}

/** Whether the code point ending just before `i` is one. */
function isBefore(re: RegExp, s: string, i: number): boolean {
  return re.test(charBefore(s, i));
}

/** The whole code point ending just before `i` (a surrogate pair is one character). */
function charBefore(s: string, i: number): string {
  const lo = s.charCodeAt(i - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && i >= 2) return s.slice(i - 2, i);
  return s.slice(i - 1, i);
}
