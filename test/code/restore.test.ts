import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { runDatapoint, type OracleOptions } from '../../src/code/oracle.js';
import { noSandbox } from '../../src/code/sandbox.js';
import { createSolver } from '../../src/code/solvers/registry.js';
import { loadCodeTask } from '../../src/code/task.js';
import { createNullMeter } from '../../src/code/energy.js';
import { tempDir, writeShellTask } from './helpers.js';

const tmp = tempDir('jb-restore-');
const suite = join(tmp, 'suite');
const work = join(tmp, 'work');
mkdirSync(work);
after(() => {
  spawnSync('chattr', ['-R', '-f', '-i', '-a', tmp]);
  rmSync(tmp, { recursive: true, force: true });
});

/** Whether this machine lets us set the immutable flag here (root on a filesystem that supports it). */
function chattrWorks(): string | null {
  const probe = join(tmp, 'chattr-probe');
  writeFileSync(probe, 'x');
  const r = spawnSync('chattr', ['+i', probe]);
  spawnSync('chattr', ['-i', probe]);
  rmSync(probe, { force: true });
  return r.status === 0 ? null : `chattr +i does not work here (${r.stderr?.toString().trim() || `exit ${r.status}`}); needs root on ext4/xfs/btrfs/tmpfs`;
}
const skip = chattrWorks();

function opts(): OracleOptions {
  return { meter: createNullMeter(), sandbox: noSandbox(), env: { PATH: process.env.PATH }, default_timeout_s: 30, kill_grace_ms: 200, tmp_base: work };
}

describe('oracle: test files the solver locks', { skip: skip ?? false }, () => {
  for (const [label, cmd] of [
    ['an immutable test file (chattr +i)', 'echo true > test/check.sh && chattr +i test/check.sh'],
    ['an append-only tests folder (chattr +a)', 'echo true > test/check.sh && chattr +a test'],
  ] as const) {
    // Grading runs on a fresh copy of the solver's tree, where the flag does not follow:
    // the pristine tests are restored there, so the lock changes nothing but the solver's own copy.
    test(`${label}: graded with the pristine tests, never resolved, and its workdir is removed`, async () => {
      const t = loadCodeTask(writeShellTask(suite, { name: `locked-${label.length}` }));
      const d = await runDatapoint(t, createSolver(`cmd:${cmd}`), 0, opts());
      assert.equal(d.valid, true, JSON.stringify(d));
      assert.equal(d.resolved, false);
      assert.deepEqual(d.tests_modified, ['test/check.sh']);
      assert.equal(d.grade?.exit_code, 1, 'the task’s own test ran as the grade, and failed');
      assert.equal(d.error, null, d.error ?? '');
      assert.deepEqual(readdirSync(work), [], 'the workdir was removed despite the flag');
      assert.equal(existsSync(d.workdir ?? join(work, 'none')), false);
    });
  }
});
