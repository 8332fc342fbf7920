import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Case } from '../../src/core/types.js';
import { SCORERS } from '../../src/scorers/index.js';

const k = (expected: string | null, choices?: string[]): Case => ({ id: 'x', prompt: 'p', expected, dataset: 'd', weight: 1, tags: [], ...(choices ? { choices } : {}) });

describe('scorers', () => {
  it('substring is case-insensitive and null for unscored cases', () => {
    assert.equal(SCORERS.substring.score(k('Paris'), 'it is PARIS.').passed, true);
    assert.equal(SCORERS.substring.score(k('Paris'), 'Lyon').passed, false);
    assert.equal(SCORERS.substring.score(k(null), 'anything').passed, null);
  });
  it('exact trims but respects case', () => {
    assert.equal(SCORERS.exact.score(k('42'), ' 42\n').passed, true);
    assert.equal(SCORERS.exact.score(k('Au'), 'au').passed, false);
  });
  it('regex tests the pattern, case-insensitively', () => {
    assert.equal(SCORERS.regex.score(k('^\\s*12:15'), '12:15 pm').passed, true);
    assert.equal(SCORERS.regex.score(k('^12:15$'), 'at 12:15').passed, false);
  });
  it('choice takes the first standalone option letter of the upper-cased reply', () => {
    assert.deepEqual(SCORERS.choice.score(k('B'), 'the answer is b.'), { passed: true, extracted: 'B' });
    assert.equal(SCORERS.choice.score(k('B'), 'A, or maybe B').passed, false);
    assert.equal(SCORERS.choice.score(k('C'), 'BECAUSE').passed, false); // no standalone letter
    assert.equal(SCORERS.choice.score(k('E', ['1', '2', '3', '4', '5']), 'E').passed, true);
    assert.equal(SCORERS.choice.score(k('A'), 'E then A').passed, true); // E is not an option of four
  });
});
