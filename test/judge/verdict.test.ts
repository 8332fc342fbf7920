import assert from 'node:assert/strict';
import { test } from 'node:test';
import { promptHash, ratingPrompt } from '../../src/judge/prompts.js';
import { parseChoice, parseRating } from '../../src/judge/verdict.js';

test("ratings are read as FastChat reads them: the first [[n]], else the first [n]; outside 1-10 is not read", () => {
  const cases: [string, number | null][] = [
    ['Clear and correct. Rating: [[7]]', 7],
    ['[[10]]', 10],
    ['[[1]]', 1],
    ['Solid. [[7.5]]', 7.5],
    ['[[7]] ... so, again, [[7]]', 7],
    ['[[7]] or perhaps [[8]]', 7],
    ['Rating: [7]', 7],
    ['list item [2] then the verdict [[6]]', 6],
    ['[3] and [9]', 3],
    ['[[7.]]', 7],
    ['[[0]]', null],
    ['[[11]]', null],
    ['[[11]] no, [[7]]', null],
    ['[[ 7 ]]', null],
    ['Rating: 7/10', null],
    ['[[seven]]', null],
    ['', null],
    ['[[A]]', null],
  ];
  for (const [text, want] of cases) assert.equal(parseRating(text), want, JSON.stringify(text));
});

test('pairwise verdicts are read as FastChat reads them: [[A]], else [[B]], else [[C]]', () => {
  assert.equal(parseChoice('B is better. [[B]]'), 'B');
  assert.equal(parseChoice('[[C]]'), 'C');
  assert.equal(parseChoice('[[A]] [[A]]'), 'A');
  assert.equal(parseChoice('[[B]] no, [[A]]'), 'A');
  assert.equal(parseChoice('[[C]] or [[B]]'), 'B');
  assert.equal(parseChoice('[A]'), null);
  assert.equal(parseChoice('[[D]]'), null);
  assert.equal(parseChoice('[[7]]'), null);
});

test('prompt hashes differ per mode and are stable', () => {
  assert.equal(promptHash('single'), promptHash('single'));
  assert.notEqual(promptHash('single'), promptHash('pairwise'));
  assert.match(promptHash('single'), /^sha256:[0-9a-f]{64}$/);
});

test('turn 2 is rated inside the conversation; an answer holding a template placeholder is not substituted again', () => {
  const p = ratingPrompt({ questions: ['q1', 'q2'], answers: ['{answer} a1', 'a2'] });
  assert.equal(p.kind, 'rate-turn');
  const user = p.messages[1]!.content;
  assert.ok(user.indexOf('q1') < user.indexOf('{answer} a1') && user.indexOf('{answer} a1') < user.indexOf('q2') && user.indexOf('q2') < user.indexOf('a2'));
  const one = ratingPrompt({ questions: ['q1', 'q2'], answers: ['joined answer'] });
  assert.equal(one.kind, 'rate', 'a single answer to all turns (Follow-up: concatenation) is rated once');
  assert.equal(ratingPrompt({ questions: ['q1'], answers: ['a'], reference: ['r'] }).kind, 'rate-ref');
});
