/**
 * Per-test grading against hostile solvers: each attack below makes the test command exit 0 (or its
 * report claim success) without fixing the bug. The oracle grades from each test's reported outcome,
 * so none is resolved, under bwrap (as root in CI: uid 65534) and with --sandbox none.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createNullMeter } from '../../src/code/energy.js';
import { runDatapoint, type OracleOptions } from '../../src/code/oracle.js';
import { bwrapFor, noSandbox, type Sandbox } from '../../src/code/sandbox.js';
import { createSolver } from '../../src/code/solvers/registry.js';
import { loadCodeTask, type CodeTask } from '../../src/code/task.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('jb-per-test-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const work = join(tmp, 'work');
mkdirSync(work);
const bw = bwrapFor();
const sandboxes: Sandbox[] = bw.sandbox ? [bw.sandbox, noSandbox()] : [noSandbox()];

function writeTree(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
}

function makeTask(name: string, toml: string[], trees: { before: Record<string, string>; reference: Record<string, string>; tests?: Record<string, string> }): CodeTask {
  const dir = join(tmp, 'suite', name);
  writeTree(dir, { 'task.toml': [`name = "${name}"`, 'prompt = "make add add"', 'test_timeout_s = 30', ...toml].join('\n') + '\n' });
  writeTree(join(dir, 'before'), trees.before);
  writeTree(join(dir, 'reference'), trees.reference);
  if (trees.tests) writeTree(join(dir, 'tests'), trees.tests);
  return loadCodeTask(dir);
}

const BUGGY_JS = 'export const add = (a, b) => a - b;\nexport const sub = (a, b) => a - b;\n';
const NODE_TEST =
  "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add, sub } from '../src/calc.js';\n" +
  "test('adds', () => assert.equal(add(2, 2), 4));\ntest('subtracts', () => assert.equal(sub(3, 1), 2));\n";
const nodeTrees = { before: { 'package.json': '{ "type": "module" }\n', 'src/calc.js': BUGGY_JS }, reference: { 'src/calc.js': BUGGY_JS.replace('a - b;\nexport const sub', 'a + b;\nexport const sub') } };

/** Visible tests (test_files), one node:test run. */
const visible = makeTask('node-visible', ['test_cmd = "node test/calc.test.js"', 'test_files = ["test/calc.test.js"]'], {
  ...nodeTrees,
  before: { ...nodeTrees.before, 'test/calc.test.js': NODE_TEST },
});
/** Hidden tests, SWE-bench style: the test file is a FAIL_TO_PASS name, laid in only for grading. */
const hidden = makeTask('node-hidden', ['test_cmd = "node {test}"', 'fail_to_pass = ["test/calc.test.js"]'], { ...nodeTrees, tests: { 'test/calc.test.js': NODE_TEST } });

/** A solver that writes `content` over src/calc.js (base64 through the shell, so any bytes pass). */
const writes = (content: string, file = 'src/calc.js') => createSolver(`cmd:echo ${Buffer.from(content).toString('base64')} | base64 -d > ${file}`);

/**
 * Re-runs the test process with a runner flag smuggled in (through NODE_OPTIONS, or on the command line
 * for a flag Node refuses there), and exits with its status.
 */
const reexecWith = (flag: string, via: 'NODE_OPTIONS' | 'argv' = 'NODE_OPTIONS') =>
  "import { spawnSync } from 'node:child_process';\n" +
  `if (!process.env.JB_AGAIN) { const r = spawnSync(process.execPath, [${via === 'argv' ? `'${flag}', ` : ''}...process.argv.slice(1)], { stdio: 'inherit', env: { ...process.env, JB_AGAIN: '1'${via === 'NODE_OPTIONS' ? `, NODE_OPTIONS: \`\${process.env.NODE_OPTIONS ?? ''} ${flag}\`` : ''} } }); process.exit(r.status ?? 1); }\n` +
  BUGGY_JS;

const nodeAttacks: [string, string][] = [
  ['process.exit(0) prepended', `process.exit(0);\n${BUGGY_JS}`],
  ['process.exitCode = 0 in an exit handler', `process.on('exit', () => { process.exitCode = 0; });\n${BUGGY_JS}`],
  ["process.on('exit') rewriting the status", `process.on('exit', () => process.reallyExit(0));\n${BUGGY_JS}`],
  [
    'node:test patched to skip from the code under test',
    "import nt from 'node:test';\nfor (const k of ['test', 'it']) { try { nt[k] = nt.skip; } catch {} }\ntry { Object.defineProperty(nt, 'test', { value: nt.skip }); } catch {}\nprocess.on('exit', () => process.reallyExit(0));\n" + BUGGY_JS,
  ],
  ['--test-name-pattern smuggled into a re-run of the test process', reexecWith('--test-name-pattern=^nothing-matches$', 'argv')],
  ['--test-only smuggled through NODE_OPTIONS', reexecWith('--test-only')],
  ['a fake TAP stream on stdout, then exit 0', "process.stdout.write('TAP version 13\\n1..2\\nok 1 - adds\\nok 2 - subtracts\\n');\nprocess.exit(0);\n" + BUGGY_JS],
];

function opts(sandbox: Sandbox): OracleOptions {
  return { meter: createNullMeter(), sandbox, env: { PATH: process.env.PATH }, default_timeout_s: 60, kill_grace_ms: 200, tmp_base: work };
}

for (const sandbox of sandboxes) {
  describe(`attacks on per-test grading (--sandbox ${sandbox.kind})`, () => {
    test('the reference fix resolves both node:test tasks (the attacks below are judged by the same oracle)', async () => {
      for (const t of [visible, hidden]) {
        const d = await runDatapoint(t, createSolver('reference'), 0, opts(sandbox));
        assert.equal(d.resolved, true, `${t.name}: ${JSON.stringify(d)}`);
        assert.ok(Object.keys(d.grade?.reported ?? {}).length >= 2, JSON.stringify(d.grade));
      }
    });
    for (const [name, content] of nodeAttacks) {
      test(`${name}: not resolved`, async () => {
        for (const t of [visible, hidden]) {
          const d = await runDatapoint(t, writes(content), 0, opts(sandbox));
          assert.equal(d.valid, true, `${t.name}: ${d.invalid_reason}`);
          assert.equal(d.resolved, false, `${t.name}: ${JSON.stringify(d.grade)}`);
          assert.ok(d.grade_reason, `${t.name}: a reason is given`);
        }
      });
    }
  });
}

test('a test skipped or missing where the baseline ran it is named in the datapoint', async () => {
  const skipped = await runDatapoint(visible, writes(reexecWith('--test-only')), 0, opts(noSandbox()));
  assert.deepEqual(skipped.tests_skipped, ['adds', 'subtracts']);
  const exited = await runDatapoint(visible, writes(`process.exit(0);\n${BUGGY_JS}`), 0, opts(noSandbox()));
  assert.deepEqual(exited.tests_missing, ['adds', 'subtracts']);
  assert.equal(exited.grade?.exit_code, 0, 'the exit status said success');
});

const hasPytest = (() => {
  try {
    execFileSync('/usr/bin/python3', ['-m', 'pytest', '--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('a pytest task graded from its JUnit report', { skip: hasPytest ? false : "Debian's python3-pytest is not installed" }, () => {
  const BUGGY_PY = 'def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n';
  const PY_TEST = 'from src.calc import add, sub\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n';
  const py = hasPytest
    ? makeTask(
        'pytest-calc',
        ['test_cmd = "/usr/bin/python3 -m pytest -q -p no:cacheprovider {test}"', 'fail_to_pass = ["tests/test_calc.py::test_add"]', 'pass_to_pass = ["tests/test_calc.py::test_sub"]'],
        {
          before: { 'src/__init__.py': '', 'src/calc.py': BUGGY_PY, 'tests/__init__.py': '' },
          reference: { 'src/calc.py': BUGGY_PY.replace('return a - b\n\n\ndef sub', 'return a + b\n\n\ndef sub') },
          tests: { 'tests/test_calc.py': PY_TEST },
        },
      )
    : null;
  for (const sandbox of sandboxes) {
    test(`one pytest run; reference resolves, a conftest.py forcing every outcome to pass and a module-level skip do not (--sandbox ${sandbox.kind})`, async () => {
      const t = py!;
      assert.equal(t.test_format, 'pytest-junit');
      const ref = await runDatapoint(t, createSolver('reference'), 0, opts(sandbox));
      assert.equal(ref.resolved, true, JSON.stringify(ref));
      assert.deepEqual(ref.baseline.tests, { 'tests/test_calc.py::test_add': 'fail', 'tests/test_calc.py::test_sub': 'pass' });
      assert.deepEqual(ref.grade?.tests, { 'tests/test_calc.py::test_add': 'pass', 'tests/test_calc.py::test_sub': 'pass' });
      const conftest = 'import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = "passed"\n';
      const forced = await runDatapoint(t, writes(conftest, 'conftest.py'), 0, opts(sandbox));
      assert.equal(forced.resolved, false, JSON.stringify(forced.grade));
      assert.deepEqual(forced.harness_modified, ['conftest.py']);
      // The code under test skips the whole test module when imported: the FAIL_TO_PASS test is never reported.
      const gone = await runDatapoint(t, writes(`import pytest\npytest.skip("gone", allow_module_level=True)\n${BUGGY_PY}`, 'src/calc.py'), 0, opts(sandbox));
      assert.equal(gone.resolved, false, JSON.stringify(gone.grade));
      assert.ok(gone.tests_missing?.includes('tests/test_calc.py::test_add'), JSON.stringify(gone));
    });
  }
});
