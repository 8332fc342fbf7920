import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One instance in SWE-bench's fields (lists JSON-encoded, as the published dataset stores them). */
export interface FixtureInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  patch: string;
  test_patch: string;
  FAIL_TO_PASS: string;
  PASS_TO_PASS: string;
  version: string;
  environment_setup_commit: string;
}

export interface SwebenchFixture {
  /** The folder of mirrors (`--repos`). */
  repos: string;
  /** The mirror of acme/calc. */
  repo: string;
  base: string;
  instances: FixtureInstance[];
  /** The instances as JSONL. */
  jsonl: string;
}

const testFile = (expr: string) => `import assert from 'node:assert/strict';\nimport { test } from 'node:test';\n${expr}\n`;

/**
 * A tiny repository in SWE-bench's shape under `tmp`: two bugs at base_commit, a passing test, and a
 * later commit holding both fixes; two instances (acme__calc-1, acme__calc-2) whose test_patch adds
 * each bug's failing test.
 */
export function buildSwebenchFixture(tmp: string): SwebenchFixture {
  const repos = join(tmp, 'repos');
  const repo = join(repos, 'acme__calc');
  mkdirSync(repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: repo }).toString();
  const write = (rel: string, text: string) => {
    mkdirSync(join(repo, rel, '..'), { recursive: true });
    writeFileSync(join(repo, rel), text);
  };
  git('init', '-q');
  write('package.json', '{ "type": "module" }\n');
  write('src/add.js', 'export const add = (a, b) => a - b;\n');
  write('src/mul.js', 'export const mul = (a, b) => a + b;\n');
  write('test/keep.test.js', testFile("import { add } from '../src/add.js';\ntest('add is a function', () => assert.equal(typeof add, 'function'));"));
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  const base = git('rev-parse', 'HEAD').trim();

  const diffOf = (change: () => void, files: string[]): string => {
    change();
    git('add', '-N', '.');
    const d = git('diff', '--', ...files);
    git('reset', '-q');
    git('checkout', '-q', '--', '.');
    git('clean', '-qfd');
    return d;
  };
  const instance = (n: string, fix: string, fixed: string, testName: string, testBody: string): FixtureInstance => ({
    instance_id: `acme__calc-${n}`,
    repo: 'acme/calc',
    base_commit: base,
    problem_statement: `${fix} gives the wrong answer; fix it.`,
    patch: diffOf(() => write(fix, fixed), [fix]),
    test_patch: diffOf(() => write(testName, testBody), [testName]),
    FAIL_TO_PASS: JSON.stringify([testName]),
    PASS_TO_PASS: JSON.stringify(['test/keep.test.js']),
    version: '1.0',
    environment_setup_commit: base,
  });
  const instances = [
    instance('1', 'src/add.js', 'export const add = (a, b) => a + b;\n', 'test/add.test.js', testFile("import { add } from '../src/add.js';\ntest('adds', () => assert.equal(add(2, 3), 5));")),
    instance('2', 'src/mul.js', 'export const mul = (a, b) => a * b;\n', 'test/mul.test.js', testFile("import { mul } from '../src/mul.js';\ntest('multiplies', () => assert.equal(mul(2, 3), 6));")),
  ];
  // The fixes land later in the mirror's history: a solver must not be able to find them there.
  write('src/add.js', 'export const add = (a, b) => a + b;\n');
  write('src/mul.js', 'export const mul = (a, b) => a * b;\n');
  git('commit', '-q', '-am', 'the fixes (future history)');

  const jsonl = join(tmp, 'instances.jsonl');
  writeFileSync(jsonl, instances.map((i) => JSON.stringify(i)).join('\n') + '\n');
  return { repos, repo, base, instances, jsonl };
}
