import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scrubEnv } from '../../src/code/env.js';
import { expandTemplate, shellQuote } from '../../src/code/solvers/command.js';
import { createSolver, createSolvers, splitSolverList } from '../../src/code/solvers/registry.js';
import { isJoulebenchError } from '../../src/core/errors.js';

describe('solver specs', () => {
  test('commas inside a cmd: template stay in the template', () => {
    assert.deepEqual(splitSolverList('reference,noop'), ['reference', 'noop']);
    assert.deepEqual(splitSolverList('cmd:agent --x a,b {prompt},noop,mine=cmd:other'), ['cmd:agent --x a,b {prompt}', 'noop', 'mine=cmd:other']);
  });

  test('presets, labels and errors', () => {
    assert.equal(createSolver('claude').kind, 'cmd');
    assert.match(String(createSolver('claude').describe().template), /^claude -p \{prompt\} --output-format json/);
    assert.equal(createSolver('fast=cmd:echo hi').id, 'fast');
    assert.equal(createSolver('cmd:echo hi').id, 'cmd:echo hi');
    assert.throws(() => createSolver('nope'), (e) => isJoulebenchError(e) && e.exitCode === 2 && /unknown solver "nope"/.test(e.message));
    assert.throws(() => createSolvers(['noop', 'noop']), /listed twice/);
    assert.throws(() => createSolver('cmd:  '), /needs a command/);
  });

  test('placeholders are substituted shell-quoted', () => {
    assert.equal(shellQuote("it's"), `'it'\\''s'`);
    assert.equal(expandTemplate('agent -p {prompt} --in {workdir} # {task}', { prompt: "fix 'x'; rm -rf /", workdir: '/w d', task: 't' }), `agent -p 'fix '\\''x'\\''; rm -rf /' --in '/w d' # 't'`);
  });
});

describe('solver environment', () => {
  test('secret-looking variables are dropped unless passed; names recorded, values never', () => {
    const { env, scrubbed } = scrubEnv(
      { PATH: '/bin', HOME: '/h', ANTHROPIC_API_KEY: 'sk-1', GITHUB_TOKEN: 'g', DB_PASSWORD: 'p', NODE_TEST_CONTEXT: 'child', LANG: 'C' },
      ['ANTHROPIC_API_KEY'],
    );
    assert.deepEqual(Object.keys(env).sort(), ['ANTHROPIC_API_KEY', 'HOME', 'LANG', 'PATH']);
    assert.deepEqual(scrubbed, ['DB_PASSWORD', 'GITHUB_TOKEN']);
  });
});
