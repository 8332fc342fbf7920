import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Case } from '../../src/core/types.js';
import { SCORERS } from '../../src/scorers/index.js';
import { loadSuite } from '../../src/suites/loader.js';
import { promptOf } from '../../src/suites/prompt.js';
import { BIN, cli } from '../helpers/cli.js';

const k = (expected: string | null, choices?: string[]): Case => ({ id: 'x', prompt: 'p', expected, dataset: 'd', weight: 1, tags: [], ...(choices ? { choices } : {}) });
const sub = (expected: string, answer: string): boolean | null => SCORERS.substring.score(k(expected), answer).passed;

const dir = mkdtempSync(join(tmpdir(), 'jb-scoring-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('substring matches on token boundaries', () => {
  it('the issue\'s examples: no match inside another token or a longer number', () => {
    assert.equal(sub('11', 'tok11'), false);
    assert.equal(sub('11', '110'), false);
    assert.equal(sub('yes', 'yesterday'), false);
    assert.equal(sub('4', '4.5'), false);
    assert.equal(sub('4', 'about 3.4 of them'), false);
    assert.equal(sub('4', '1,400 people'), false);
    assert.equal(sub('4', 'it is -4'), false);
    assert.equal(sub('map', 'use flatMap'), false);
  });
  it('still matches the answer where it stands as a token', () => {
    assert.equal(sub('11', 'About 11.'), true);
    assert.equal(sub('11', '(11)'), true);
    assert.equal(sub('yes', 'Yes!'), true);
    assert.equal(sub('4', '4 people'), true);
    assert.equal(sub('4', 'the count is 4.'), true);
    assert.equal(sub('map', 'Array.prototype.map()'), true);
    assert.equal(sub('12:15', 'at 12:15 pm'), true);
    assert.equal(sub('Leonardo', 'Leonardo da Vinci'), true);
    assert.equal(sub('C++', 'written in C++.'), true);
    assert.equal(sub('ISO-4', 'see ISO-4 here'), true);
    assert.equal(sub('café', 'un CAFÉ noir'), true);
    assert.equal(sub('café', 'cafés'), false);
  });
  it('a numeric expected answer matches a whole number only, sentence punctuation after it allowed', () => {
    for (const reply of ['4/5', 'it is 3/4', '4⁄5', '4.5', '-4', '40', '4e3', 'x4']) assert.equal(sub('4', reply), false, reply);
    for (const reply of ['The answer is 4.', 'It is 4, clearly', '4', '(4)', 'either/or: 4']) assert.equal(sub('4', reply), true, reply);
  });
  it('a later occurrence on a boundary still counts after one inside a token', () => {
    assert.equal(sub('11', 'tok11 and then 11'), true);
  });

  it('every bundled mt/router expected answer: a long wrong reply holding it inside another token fails, the answer itself passes', () => {
    const suite = loadSuite('all');
    let checked = 0;
    for (const c of suite.cases) {
      if (c.expected === null) continue;
      checked++;
      const e = c.expected;
      const wordy = `Let me think about this at length. It is certainly not x${e}, nor ${e}s, nor ${e}0, and a careful reader would never say ${e}_alt; I am unsure.`;
      assert.equal(SCORERS.substring.score(c, wordy).passed, false, `${c.id}: ${wordy}`);
      if (/\d$/.test(e)) assert.equal(SCORERS.substring.score(c, `roughly ${e}.5 or so`).passed, false, `${c.id}: ${e}.5`);
      assert.equal(SCORERS.substring.score(c, `The answer is ${e}.`).passed, true, c.id);
      // The echo backend repeats the prompt: no scored prompt may hold its own answer (echo tasks excepted).
      if (!c.tags.includes('echo-task')) assert.equal(SCORERS.substring.score(c, promptOf(c)).passed, false, `${c.id}: its prompt contains its answer`);
    }
    assert.ok(checked >= 38, `checked ${checked}`);
  });

  it('the reference cascade still answers every router case it knows under the stricter scorer', async () => {
    const out = join(dir, 'router.json');
    const r = await cli(['run', '--suite', 'router', '-o', out, '--no-history', '-q', '--results', join(dir, 'router.jsonl')]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse((await import('node:fs')).readFileSync(out, 'utf8')) as { accuracy_pct: number };
    assert.equal(report.accuracy_pct, 100);
  });
});

describe('choice refuses an expected answer that is not one of the case\'s choices', () => {
  for (const [what, c, why] of [
    ['a letter past the last option', { id: 'q1', prompt: 'p', choices: ['a', 'b', 'c', 'd'], expected: 'E' }, /case 1 \(id "q1"\): expected: "E" is not one of the case's choices A, B, C, D/],
    ['the text of a choice', { id: 'q2', prompt: 'p', choices: ['Paris', 'Lyon'], expected: 'Paris' }, /case 1 \(id "q2"\).*write "A"/],
  ] as const) {
    it(`${what}: exit 2, naming the case`, async () => {
      const path = join(dir, `choice-${c.id}.json`);
      writeFileSync(path, JSON.stringify({ name: 'mc', scorer: 'choice', cases: [{ id: 'ok', prompt: 'p', choices: ['x', 'y'], expected: 'B' }, c] }));
      const r = await cli(['run', '--suite', path, '--target', 'echo', '--no-history', '-q', '-o', join(dir, 'x.json')]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, why);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    });
  }
});

describe('regex runs on a linear-time engine (RE2 syntax)', () => {
  it('a catastrophic pattern (^(a+)+$) against a long near-match finishes at once', async () => {
    const path = join(dir, 'redos.json');
    writeFileSync(path, JSON.stringify({ name: 'redos', scorer: 'regex', cases: [{ id: 'r1', prompt: `${'a'.repeat(5000)}!`, expected: '^(a+)+$' }, { id: 'r2', prompt: 'x 12 apples', expected: '\\d+ apples' }] }));
    // Spawned with a hard kill: a backtracking engine never returns from this pattern (2^5000 paths).
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'run', '--suite', path, '--target', 'echo', '--no-history', '-q', '--results', join(dir, 'redos.jsonl'), '-o', join(dir, 'redos-report.json')], {
        env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: dir },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.on('close', (code, signal) => {
        clearTimeout(t);
        resolve({ code, stdout: '', stderr, killed: signal === 'SIGKILL' });
      });
    });
    assert.equal(r.killed, false, 'the run was stuck in the regex');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse((await import('node:fs')).readFileSync(join(dir, 'redos-report.json'), 'utf8')) as { correct_count: number; scored_count: number };
    assert.deepEqual([report.correct_count, report.scored_count], [1, 2]);
  });

  it('a pattern RE2 cannot run (a backreference) is refused at load: exit 2, naming the case', async () => {
    const path = join(dir, 'backref.json');
    writeFileSync(path, JSON.stringify({ name: 'br', scorer: 'regex', cases: [{ id: 'b1', prompt: 'p', expected: '(a)\\1' }] }));
    const r = await cli(['run', '--suite', path, '--target', 'echo', '--no-history', '-q', '-o', join(dir, 'y.json')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /case 0 \(id "b1"\): expected: not a valid regular expression \(RE2 syntax, no backreferences or lookaround: invalid escape sequence\)$/m);
  });

  it('matching is case-insensitive and reports what matched', () => {
    assert.deepEqual(SCORERS.regex.score(k('(\\d+) APPLES'), 'I have 12 apples'), { passed: true, extracted: '12 apples' });
  });
});
