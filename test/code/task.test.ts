import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { packageRoot } from '../../src/code/paths.js';
import { listFiles, loadCodeSuite, loadCodeTask } from '../../src/code/task.js';
import { isJoulebenchError } from '../../src/core/errors.js';
import { tempDir, writeShellTask } from './helpers.js';

const tmp = tempDir();
after(() => rmSync(tmp, { recursive: true, force: true }));

function expectSuiteError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e) => {
    assert.ok(isJoulebenchError(e), `not a JoulebenchError: ${String(e)}`);
    assert.equal(e.exitCode, 2);
    assert.doesNotMatch(e.message, /\n/);
    assert.match(e.message, pattern);
    return true;
  });
}

describe('code task loader', () => {
  test('the bundled smoke suite: at least 8 valid tasks, single- and multi-file, a new file, a trap', () => {
    const s = loadCodeSuite('smoke');
    assert.ok(s.tasks.length >= 8, `${s.tasks.length} tasks`);
    assert.match(s.digest, /^sha256:[0-9a-f]{64}$/);
    const multi = s.tasks.filter((t) => listFiles(t.reference_dir!).length > 1);
    assert.ok(multi.length >= 2, 'multi-file fixes');
    const newFile = s.tasks.filter((t) => listFiles(t.reference_dir!).some((f) => !listFiles(t.before_dir).includes(f)));
    assert.ok(newFile.length >= 1, 'a task whose fix is a new file');
    assert.ok(s.tasks.some((t) => t.name === 'median-trap'));
    for (const t of s.tasks) assert.match(t.test_cmd, /^node /);
    assert.ok(existsSync(join(packageRoot(), 'package.json')) && existsSync(join(packageRoot(), 'src', 'code', 'suites', 'smoke')));
  });

  test('--tasks selects, and names an unknown task', () => {
    assert.deepEqual(loadCodeSuite('smoke', ['off-by-one']).tasks.map((t) => t.name), ['off-by-one']);
    expectSuiteError(() => loadCodeSuite('smoke', ['nope']), /--tasks: no task named "nope"/);
  });

  test('a folder of tasks, and a single task folder', () => {
    const suite = join(tmp, 'two');
    writeShellTask(suite, { name: 'b' });
    writeShellTask(suite, { name: 'a' });
    assert.deepEqual(loadCodeSuite(suite).tasks.map((t) => t.name), ['a', 'b']);
    assert.equal(loadCodeSuite(join(suite, 'a')).tasks.length, 1);
    expectSuiteError(() => loadCodeSuite(join(tmp, 'missing')), /not a folder/);
  });

  test('validation names the file and the key', () => {
    const dir = (name: string, toml: string) => writeShellTask(join(tmp, 'bad'), { name, toml });
    const base = 'prompt = "p"\ntest_cmd = "sh test/check.sh"\ntest_files = ["test/check.sh"]';
    expectSuiteError(() => loadCodeTask(dir('no-name', base)), /no-name\/task\.toml: name: is required/);
    expectSuiteError(() => loadCodeTask(dir('typo', `name = "typo"\n${base}\ntest_file = []`)), /typo\/task\.toml: test_file: unknown key/);
    expectSuiteError(() => loadCodeTask(dir('badtype', `name = "badtype"\n${base}\ntimeout_s = -1`)), /timeout_s: must be > 0/);
    expectSuiteError(
      () => loadCodeTask(dir('missing-test', `name = "missing-test"\nprompt = "p"\ntest_cmd = "x"\ntest_files = ["test/nope.sh"]`)),
      /test_files\[0\]: "test\/nope\.sh" does not exist in before\//,
    );
    expectSuiteError(() => loadCodeTask(dir('escape', `name = "escape"\nprompt = "p"\ntest_cmd = "x"\ntest_files = ["../x"]`)), /test_files\[0\]: must be a relative path/);
    expectSuiteError(() => loadCodeTask(dir('toml', `name = "toml`)), /toml\/task\.toml: not valid TOML/);
  });

  test('a task needs before/ and reference/, and the reference may not touch the tests', () => {
    const d = writeShellTask(join(tmp, 'refs'), { name: 'ref-edits-test', reference: { 'src/value.txt': 'fixed\n', 'test/check.sh': 'true\n' } });
    expectSuiteError(() => loadCodeTask(d), /reference\/test\/check\.sh changes a test file/);
    const e = writeShellTask(join(tmp, 'refs'), { name: 'no-ref' });
    rmSync(join(e, 'reference'), { recursive: true });
    expectSuiteError(() => loadCodeTask(e), /reference\/ is missing/);
    mkdirSync(join(e, 'reference'));
    expectSuiteError(() => loadCodeTask(e), /reference\/ is empty/);
    writeFileSync(join(e, 'reference', 'x'), '');
    assert.equal(loadCodeTask(e).name, 'no-ref');
  });

  test('at least three smoke tasks grade with hidden tests the solver never sees (fail_to_pass)', () => {
    const hidden = loadCodeSuite('smoke').tasks.filter((t) => t.tests_dir !== null && t.fail_to_pass.length > 0);
    assert.ok(hidden.length >= 3, hidden.map((t) => t.name).join(', '));
    for (const t of hidden) for (const f of t.fail_to_pass) assert.equal(existsSync(join(t.before_dir, f)), false, `${t.name}: ${f} is in before/`);
  });

  test('a task with neither test_files nor tests/ is refused; pass_to_pass needs fail_to_pass', () => {
    const d = writeShellTask(join(tmp, 'f2p'), { name: 'none', toml: 'name = "none"\nprompt = "p"\ntest_cmd = "x"' });
    expectSuiteError(() => loadCodeTask(d), /test_files: must list at least one test file \(or hold hidden tests in tests\/\)/);
    const e = writeShellTask(join(tmp, 'f2p'), { name: 'p2p', toml: 'name = "p2p"\nprompt = "p"\ntest_cmd = "x"\ntest_files = ["test/check.sh"]\npass_to_pass = ["a"]' });
    expectSuiteError(() => loadCodeTask(e), /fail_to_pass: must name at least one test/);
  });
});

