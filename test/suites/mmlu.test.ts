import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { getScorer } from '../../src/scorers/index.js';
import { suiteDigest } from '../../src/suites/digest.js';
import { loadMmlu, mmluDigest, mmluPrompt, readMmluRows } from '../../src/suites/mmlu.js';

// Our own MMLU-format items (no real MMLU text is bundled or used).
const rows = [
  { question: 'What is 2 + 2?', subject: 'toy_math', choices: ['3', '4', '5', '6'], answer: 1 },
  { question: 'Which is a colour?', subject: 'toy_words', choices: ['dog', 'run', 'red', 'sky'], answer: 'C' },
  { question: 'What is 3 × 3?', subject: 'toy_math', choices: ['9', '6', '3', '12'], answer: 0 },
  { question: 'Opposite of up?', subject: 'toy_words', choices: ['left', 'in', 'over', 'down'], answer: '3' },
];
const dir = mkdtempSync(join(tmpdir(), 'jb-mmlu-'));
const jsonl = join(dir, 'items.jsonl');
writeFileSync(jsonl, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
const json = join(dir, 'items.json');
writeFileSync(json, JSON.stringify(rows));
const csvDir = join(dir, 'csv');
mkdirSync(csvDir);
writeFileSync(join(csvDir, 'toy_math_test.csv'), 'What is 2 + 2?,3,4,5,6,B\n"What is 3 × 3, exactly?",9,6,3,"1""2",A\n');
writeFileSync(join(csvDir, 'toy_words_test.csv'), 'question,A,B,C,D,answer\n"Which is a\ncolour?",dog,run,red,sky,C\n');

const sha = (s: string): string => 'sha256:' + createHash('sha256').update(s).digest('hex');

test('JSONL and JSON give the same rows; answers as index, digit or letter', () => {
  const a = readMmluRows(jsonl);
  assert.deepEqual(a, readMmluRows(json));
  assert.deepEqual(a.map((r) => r.answer), ['B', 'C', 'A', 'D']);
  assert.deepEqual(a.map((r) => r.id), ['toy_math-0', 'toy_words-0', 'toy_math-1', 'toy_words-1']);
});

test('Hendrycks CSV directory: subject from the file name, quoted fields, optional header', () => {
  const r = readMmluRows(csvDir);
  assert.deepEqual(r.map((x) => [x.id, x.subject, x.answer]), [
    ['toy_math-0', 'toy_math', 'B'],
    ['toy_math-1', 'toy_math', 'A'],
    ['toy_words-0', 'toy_words', 'C'],
  ]);
  assert.equal(r[1]!.question, 'What is 3 × 3, exactly?');
  assert.equal(r[1]!.choices[3], '1"2');
  assert.equal(r[2]!.question, 'Which is a\ncolour?');
});

test('0-shot prompt: instruction, blank line, question, A–D, Answer:', () => {
  const p = mmluPrompt({ subject: 'toy_math', question: 'Q?', choices: ['w', 'x', 'y', 'z'] });
  const lines = p.split('\n');
  assert.match(lines[0]!, /multiple choice question about toy math/);
  assert.doesNotMatch(lines[0]!.toUpperCase(), /\b[A-D]\b/, 'the instruction holds no standalone option letter');
  assert.deepEqual(lines.slice(1), ['', 'Q?', 'A. w', 'B. x', 'C. y', 'D. z', 'Answer:']);
});

test('subjects filter, then limit in file order; digest is sha256 of {"ids","version"}', () => {
  const s = loadMmlu(jsonl, { subjects: ['toy_math'], limit: 1, version: 'toy/v1' });
  assert.deepEqual(s.cases.map((c) => c.id), ['toy_math-0']);
  assert.equal(s.scorer, 'choice');
  assert.equal(s.digest, sha('{"ids": ["toy_math-0"], "version": "toy/v1"}'));
  assert.equal(suiteDigest(s), s.digest);
  const all = loadMmlu(jsonl, { limit: 3, version: 'toy/v1' });
  assert.deepEqual(all.cases.map((c) => c.id), ['toy_math-0', 'toy_words-0', 'toy_math-1']);
});

test('enabling retry relabels the version …/retry-N and changes the digest', () => {
  const plain = loadMmlu(jsonl);
  const retried = loadMmlu(jsonl, { retry_max_attempts: 3 });
  assert.match(plain.version, /^mmlu\/local-[0-9a-f]{12}$/);
  assert.equal(retried.version, `${plain.version}/retry-3`);
  assert.notEqual(retried.digest, plain.digest);
  assert.equal(retried.digest, mmluDigest(plain.cases.map((c) => c.id), `${plain.version}/retry-3`));
  // Same content in another format: same default version.
  assert.equal(loadMmlu(json).version, plain.version);
});

test('the choice scorer reads the first standalone letter of the upper-cased reply', () => {
  const s = loadMmlu(jsonl);
  const scorer = getScorer(s.scorer);
  const c = s.cases[0]!; // expected B
  assert.equal(scorer.score(c, 'b').passed, true);
  assert.equal(scorer.score(c, 'The answer is B.').passed, true, 'letters inside words are not standalone');
  assert.equal(scorer.score(c, 'a, or maybe B').passed, false, 'the first standalone letter wins');
  assert.equal(scorer.score(c, 'BAD').passed, false);
});

test('bad rows fail with one line naming the file, line and key', () => {
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, JSON.stringify(rows[0]) + '\n' + JSON.stringify({ ...rows[0], answer: 7 }) + '\n');
  assert.throws(() => readMmluRows(bad), /bad\.jsonl: line 2: answer must be an index 0-3 or a letter A-D, got 7/);
  writeFileSync(bad, JSON.stringify({ ...rows[0], choices: ['a', 'b'] }) + '\n');
  assert.throws(() => readMmluRows(bad), /line 1: choices must be a list of 4 strings/);
  assert.throws(() => loadMmlu(jsonl, { subjects: ['nope'] }), /params\.subjects: no questions for "nope"/);
  assert.throws(() => readMmluRows(join(dir, 'missing.jsonl')), /no such file/);
});

test('a CSV row is named by the line it starts on (a quoted field may span lines, CRLF or LF); an unclosed quote is refused', () => {
  const csv = join(dir, 'spans_test.csv');
  writeFileSync(csv, 'question,A,B,C,D,answer\r\n"q\r\nmore",a,b,c,d,A\r\n"q\r\n\r\nmore",a,b,c,d,B\r\n\r\nbad,row\r\n');
  assert.throws(() => readMmluRows(csv), /spans_test\.csv: line 8: expected 6 fields \(question,A,B,C,D,answer\), got 2/);
  writeFileSync(csv, 'q,a,b,c,d,A\n"open,a,b,c,d,A\n');
  assert.throws(() => readMmluRows(csv), /spans_test\.csv: not valid CSV \(Quote Not Closed/);
});
