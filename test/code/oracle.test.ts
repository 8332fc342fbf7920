import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runDatapoint, type OracleOptions } from '../../src/code/oracle.js';
import { bwrapFor, bwrapSandbox, noSandbox, type Sandbox } from '../../src/code/sandbox.js';
import { createSolver } from '../../src/code/solvers/registry.js';
import { loadCodeSuite, loadCodeTask, type CodeTask } from '../../src/code/task.js';
import { createNullMeter } from '../../src/code/energy.js';
import { fakeMeter, tempDir, writeShellTask, CHECK } from './helpers.js';

const tmp = tempDir();
after(() => rmSync(tmp, { recursive: true, force: true }));
const suite = join(tmp, 'suite');
const work = join(tmp, 'work');
mkdirSync(work);
const bwrapWhyNot = bwrapFor().problem;

function task(name: string, over: Parameters<typeof writeShellTask>[1] = { name }): CodeTask {
  return loadCodeTask(writeShellTask(suite, { ...over, name }));
}

function opts(over: Partial<OracleOptions> = {}): OracleOptions {
  return { meter: createNullMeter(), sandbox: noSandbox(), env: { PATH: process.env.PATH }, default_timeout_s: 30, kill_grace_ms: 200, tmp_base: work, ...over };
}

const fix = 'echo fixed > src/value.txt';

describe('oracle', () => {
  test('reference resolves, noop does not; the workdir is removed unless kept', async () => {
    const t = task('basic');
    const ref = await runDatapoint(t, createSolver('reference'), 0, opts({ keep: true }));
    assert.equal(ref.valid, true);
    assert.equal(ref.baseline.exit_code, 1);
    assert.equal(ref.resolved, true);
    assert.ok(ref.workdir && existsSync(ref.workdir));
    assert.equal(readFileSync(join(ref.workdir, 'src/value.txt'), 'utf8'), 'fixed\n');
    const noop = await runDatapoint(t, createSolver('noop'), 0, opts());
    assert.equal(noop.resolved, false);
    assert.equal(noop.grade?.exit_code, 1);
    assert.equal(noop.workdir, null);
  });

  test('a solver that edits, deletes or links away the tests resolves nothing, and the tests are restored', async () => {
    const t = task('tamper');
    for (const cmd of ['echo true > test/check.sh', 'rm -rf test', `rm -rf test && mkdir ${join(tmp, 'elsewhere')} -p && ln -s ${join(tmp, 'elsewhere')} test`]) {
      const d = await runDatapoint(t, createSolver(`cmd:${cmd}`), 0, opts());
      assert.equal(d.resolved, false, cmd);
      assert.deepEqual(d.tests_modified, ['test/check.sh'], cmd);
      assert.equal(d.grade?.exit_code, 1, cmd);
      assert.deepEqual(d.escapes, [], cmd);
    }
    // Restoring did not write through the planted link.
    assert.equal(existsSync(join(tmp, 'elsewhere', 'check.sh')), false);
  });

  test('a task whose tests already pass is flagged invalid and its solver never runs', async () => {
    const t = task('already-fixed', { name: 'already-fixed', before: { 'src/value.txt': 'fixed\n', 'test/check.sh': CHECK } });
    const meter = fakeMeter(1);
    const d = await runDatapoint(t, createSolver('reference'), 0, opts({ meter }));
    assert.equal(d.valid, false);
    assert.match(d.invalid_reason ?? '', /already pass/);
    assert.equal(d.resolved, false);
    assert.equal(d.solver_run, null);
    assert.equal(meter.windows, 0);
  });

  test('a test command that cannot run makes the datapoint invalid, not a failing baseline', async () => {
    const t = task('no-runner', {
      name: 'no-runner',
      toml: 'name = "no-runner"\nprompt = "p"\ntest_cmd = "no-such-test-runner-xyz"\ntest_format = "tap"\ntest_files = ["test/check.sh"]',
    });
    const d = await runDatapoint(t, createSolver('reference'), 0, opts());
    assert.equal(d.valid, false);
    assert.match(d.invalid_reason ?? '', /could not run \(exit 127: command not found\)/);
  });

  test('a solver that runs forever is killed on time and not resolved', async () => {
    const t = task('forever');
    const t0 = performance.now();
    const d = await runDatapoint(t, createSolver(`cmd:${fix}; sleep 30`), 0, opts({ timeout_s: 0.3 }));
    assert.equal(d.solver_run?.timed_out, true);
    assert.ok(performance.now() - t0 < 8000);
    // Its edit happened before the kill: the oracle grades the tree as it was left.
    assert.equal(d.resolved, true);
    const never = await runDatapoint(t, createSolver('cmd:sleep 30'), 0, opts({ timeout_s: 0.3 }));
    assert.equal(never.resolved, false);
  });

  test('a solver that forks children is graded and its children are killed', async () => {
    const t = task('forks');
    const d = await runDatapoint(t, createSolver(`cmd:(sleep 30 &); sleep 30 >/dev/null 2>&1 & ${fix}`), 0, opts());
    assert.equal(d.resolved, true);
    assert.ok((d.solver_run?.stragglers_killed ?? 0) >= 2, `killed ${d.solver_run?.stragglers_killed}`);
  });

  test('without a sandbox, a write through ".." or a symlink is detected and fails the datapoint', async () => {
    const t = task('escape');
    const dotdot = await runDatapoint(t, createSolver(`cmd:${fix}; echo pwned > ../outside-the-workdir.txt`), 0, opts());
    assert.equal(dotdot.grade?.exit_code, 0, 'the fix itself works');
    assert.equal(dotdot.resolved, false);
    assert.equal(dotdot.escapes.length, 1);
    assert.match(dotdot.escapes[0] ?? '', /^changed .*outside-the-workdir\.txt$/);

    const link = await runDatapoint(t, createSolver(`cmd:${fix}; ln -s ${t.toml_path} t; echo '# pwned' >> t`), 0, opts());
    assert.equal(link.resolved, false);
    assert.deepEqual(link.escapes, [`changed ${t.toml_path}`]);
  });

  test('a solver that deletes its workdir or swaps it for a link fails, and restoring writes nothing elsewhere', async () => {
    const t = task('swap');
    const target = join(tmp, 'swap-target');
    mkdirSync(target);
    const swapped = await runDatapoint(t, createSolver(`cmd:cd .. && rm -rf work && ln -s ${target} work`), 0, opts());
    assert.equal(swapped.resolved, false);
    assert.match(swapped.escapes[0] ?? '', /^replaced .*work \(the workdir itself\)$/);
    assert.equal(existsSync(join(target, 'test')), false);
    const deleted = await runDatapoint(t, createSolver('cmd:cd .. && rm -rf work'), 0, opts());
    assert.equal(deleted.resolved, false);
    assert.equal(deleted.error, null);
    assert.equal(deleted.grade?.exit_code !== 0, true);
  });

  test('a test-editing solver on a real smoke task resolves nothing', async () => {
    const t = loadCodeSuite('smoke', ['median-trap']).tasks[0]!;
    const cmd = `cmd:printf "import { test } from 'node:test';\\ntest('ok', () => {});\\n" > test/stats.test.js && node test/stats.test.js >/dev/null && echo EDITED-TESTS-PASS`;
    const d = await runDatapoint(t, createSolver(cmd), 0, opts());
    assert.match(d.solver_run?.output_tail ?? '', /EDITED-TESTS-PASS/, 'the edited tests did pass before the oracle restored them');
    assert.deepEqual(d.tests_modified, ['test/stats.test.js']);
    assert.equal(d.resolved, false);
    assert.notEqual(d.grade?.exit_code, 0);
  });

  test('under bwrap the same escapes cannot happen: nothing outside changes and the fix still counts', { skip: bwrapWhyNot ?? false }, async () => {
    const t = task('bwrap-escape');
    const sandbox: Sandbox = bwrapSandbox();
    const outside = join(tmp, 'bwrap-target.txt');
    writeFileSync(outside, 'original\n');
    const d = await runDatapoint(t, createSolver(`cmd:${fix}; echo pwned > ../outside-the-workdir.txt; ln -s ${outside} l; echo pwned > l; echo pwned > ${outside}`), 0, opts({ sandbox }));
    assert.equal(d.sandbox, 'bwrap');
    assert.deepEqual(d.escapes, []);
    assert.equal(d.resolved, true);
    assert.equal(readFileSync(outside, 'utf8'), 'original\n');
    const forever = await runDatapoint(t, createSolver('cmd:sleep 30 & sleep 30'), 0, opts({ sandbox, timeout_s: 0.3 }));
    assert.equal(forever.solver_run?.timed_out, true);
    assert.equal(forever.resolved, false);
  });

  test('energy: the solver window is metered; below-floor windows are flagged; idle is subtracted', async () => {
    const t = task('energy');
    const d = await runDatapoint(t, createSolver('reference'), 0, opts({ meter: fakeMeter(2.5, { below_floor: true }), idle: { status: 'measured', watts: 1, by_domain_watts: {}, window_ms: 100, source: 'rapl' } }));
    assert.equal(d.joules, 2.5);
    assert.equal(d.energy_source, 'rapl');
    assert.equal(d.below_floor, true);
    assert.ok(d.net_joules !== null && d.net_joules < 2.5 && d.net_joules > 2.5 - (d.window_ms ?? 0) / 1000 - 1e-9);
    // The meter's declared floor (10 ms) holds even when a reading forgets to flag a short window.
    const unflagged = await runDatapoint(t, createSolver('noop'), 0, opts({ meter: fakeMeter(0.001) }));
    assert.ok(unflagged.window_ms !== null, 'the window was measured');
    assert.equal(unflagged.below_floor, unflagged.window_ms < 10, `flag follows the ${unflagged.window_ms} ms window against the 10 ms floor`);
    const none = await runDatapoint(t, createSolver('reference'), 0, opts());
    assert.equal(none.joules, null);
    assert.equal(none.net_joules, null);
    assert.equal(none.energy_source, 'none');
  });

  test('a fake Claude Code on PATH exercises the preset: it edits the tree and its cost JSON is parsed', async () => {
    const t = task('agent');
    const bin = join(tmp, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'claude'),
      [
        '#!/bin/sh',
        '# a fake agent: checks it was called headlessly, applies the fix, reports its cost',
        'case "$*" in *"-p make src/value.txt say fixed --output-format json"*) ;; *) echo "bad args: $*" >&2; exit 2;; esac',
        'echo fixed > src/value.txt',
        `echo '{"type":"result","subtype":"success","total_cost_usd":0.0123,"usage":{"input_tokens":400,"cache_read_input_tokens":100,"output_tokens":60}}'`,
      ].join('\n'),
    );
    chmodSync(join(bin, 'claude'), 0o755);
    const d = await runDatapoint(t, createSolver('claude'), 0, opts({ env: { PATH: `${bin}:${process.env.PATH}` } }));
    assert.equal(d.solver_run?.exit_code, 0, d.solver_run?.output_tail ?? '');
    assert.equal(d.resolved, true);
    assert.equal(d.cost_usd, 0.0123);
    assert.equal(d.prompt_tokens, 500);
    assert.equal(d.completion_tokens, 60);
    assert.equal(d.usage_parsed_from, 'claude:total_cost_usd');
  });
});
