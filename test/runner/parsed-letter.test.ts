import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-parsed-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a multiple-choice case line keeps the letter read from the answer, so a wrong case shows why', async () => {
  const suite = join(dir, 'mc.json');
  const choices = ['one', 'two', 'three', 'four'];
  writeFileSync(suite, JSON.stringify({ name: 'mc', scorer: 'choice', cases: ['right', 'wrong', 'none'].map((id) => ({ id, prompt: `q ${id}`, choices, expected: 'B' })) }));
  const answers = join(dir, 'answers.json');
  writeFileSync(answers, JSON.stringify([{ id: 'right', answer: 'The answer is B.' }, { id: 'wrong', answer: 'I would say (C) three' }, { id: 'none', answer: 'no idea' }]));
  const results = join(dir, 'mc.results.jsonl');
  const r = await cli(['run', '--suite', suite, '--target', 'replay', '--answers', answers, '--results', results, '-q', '--no-history', '-o', join(dir, 'mc.json.out.json')]);
  assert.equal(r.code, 0, r.stderr);
  const cases = readFileSync(results, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.record === 'case');
  assert.deepEqual(cases.map((c) => [c.case_id, c.passed, c.parsed]), [['right', true, 'B'], ['wrong', false, 'C'], ['none', false, null]]);
  // The file is still read back as the run's own report.
  const rebuilt = await cli(['report', '--json', results]);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.equal((JSON.parse(rebuilt.stdout) as { accuracy_pct: number }).accuracy_pct, 33.3333);
});
