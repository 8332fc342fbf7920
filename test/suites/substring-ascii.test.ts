import assert from 'node:assert/strict';
import { test } from 'node:test';
import { containsToken } from '../../src/scorers/substring.js';

// The word-boundary rule written independently, with Unicode classes and code points: the scorer must agree
// with it on ASCII and non-ASCII text alike.
const WORD = /[\p{L}\p{N}\p{M}_]/u;
const DIGIT = /\p{Nd}/u;
const charAt = (s: string, i: number) => String.fromCodePoint(s.codePointAt(i) ?? 0);
const charBefore = (s: string, i: number) => {
  const lo = s.charCodeAt(i - 1);
  return lo >= 0xdc00 && lo <= 0xdfff && i >= 2 ? s.slice(i - 2, i) : s.slice(i - 1, i);
};
function reference(haystack: string, needle: string): boolean {
  if (needle.length === 0) return true;
  const first = charAt(needle, 0);
  const last = charBefore(needle, needle.length);
  const [checkStart, checkEnd, numStart, numEnd] = [WORD.test(first), WORD.test(last), DIGIT.test(first), DIGIT.test(last)];
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if (checkStart && at > 0) {
      const prev = charBefore(haystack, at);
      if (WORD.test(prev)) continue;
      if (numStart) {
        const before = at - prev.length;
        if ((prev === '.' || prev === ',' || prev === '/' || prev === '\u2044') && before > 0 && DIGIT.test(charBefore(haystack, before))) continue;
        if ((prev === '-' || prev === '\u2212' || prev === '+') && (before === 0 || !WORD.test(charBefore(haystack, before)))) continue;
      }
    }
    if (checkEnd && end < haystack.length) {
      const next = charAt(haystack, end);
      if (WORD.test(next)) continue;
      if (numEnd && (next === '.' || next === ',' || next === '/' || next === '\u2044') && end + 1 < haystack.length && DIGIT.test(charAt(haystack, end + 1))) continue;
    }
    return true;
  }
  return false;
}

test('substring: the ASCII path decides exactly as the Unicode classes do (random text, ASCII and not)', () => {
  // Letters, digits, punctuation that matters (. , / - + _), spaces, and non-ASCII: accented, combining
  // mark, Arabic-Indic digit, minus sign, a surrogate pair (a letter outside the BMP), a lone surrogate.
  const alphabet = ['a', 'b', 'Z', '4', '1', '0', '_', '.', ',', '/', '-', '+', ' ', '!', 'é', '\u2044', '\u0301', '\u0664', '\u2212', '\u{1D400}', '\udc00', '\ud800'];
  let seed = 12345;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
  const word = (len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join('');
  let agreed = 0;
  for (let i = 0; i < 20000; i++) {
    const needle = word(1 + rand(3));
    const haystack = word(rand(6)) + (rand(2) ? needle : '') + word(rand(6));
    assert.equal(containsToken(haystack, needle), reference(haystack, needle), `${JSON.stringify(haystack)} ∋ ${JSON.stringify(needle)}`);
    agreed++;
  }
  assert.equal(agreed, 20000);
  // The cases the ASCII path decides by code, spelled out.
  assert.equal(containsToken('about 4.5 units', '4'), false);
  assert.equal(containsToken('it is -4', '4'), false);
  assert.equal(containsToken('iso-4 ok', '4'), true);
  assert.equal(containsToken('1,400', '400'), false);
  assert.equal(containsToken('4/5', '4'), false);
  assert.equal(containsToken('3/4', '4'), false);
  assert.equal(containsToken('and/or 4', '4'), true);
  assert.equal(containsToken('tok_11', '11'), false);
  assert.equal(containsToken('c++ rocks', 'c++'), true);
});
