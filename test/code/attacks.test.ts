/**
 * A hostile solver against the sandbox and the oracle, run as CI runs it (as root when the suite runs
 * as root). Each attack here succeeded against the oracle before the oracle was hardened.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createNullMeter } from '../../src/code/energy.js';
import { runDatapoint, type OracleOptions } from '../../src/code/oracle.js';
import { bwrapFor, noSandbox, type Sandbox } from '../../src/code/sandbox.js';
import { createSolver } from '../../src/code/solvers/registry.js';
import { loadCodeTask, type CodeTask } from '../../src/code/task.js';
import { cgroupV2Base, setCgroupTracking } from '../../src/code/tracker.js';
import { tempDir, writeShellTask, CHECK, tapCheck } from './helpers.js';

const tmp = tempDir('jb-attacks-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const suite = join(tmp, 'suite');
const work = join(tmp, 'work');
mkdirSync(work);
const bw = bwrapFor();
const bwrap: Sandbox | null = bw.sandbox;
// The cap counts every process of the sandbox's uid, so only the fork-bomb test uses a small one.
const capped: Sandbox | null = bwrap ? bwrapFor({ max_procs: 64 }).sandbox : null;
const skipBwrap = bwrap ? false : `bwrap unavailable: ${bw.problem}`;
const hasPython = (() => {
  try {
    execFileSync('python3', ['-c', 'pass']);
    return true;
  } catch {
    return false;
  }
})();

function task(name: string, over: Partial<Parameters<typeof writeShellTask>[1]> = {}): CodeTask {
  return loadCodeTask(writeShellTask(suite, { name, ...over }));
}

function opts(over: Partial<OracleOptions> = {}): OracleOptions {
  return { meter: createNullMeter(), sandbox: noSandbox(), env: { PATH: process.env.PATH }, default_timeout_s: 30, kill_grace_ms: 200, tmp_base: work, ...over };
}

describe('attacks on the sandbox (bwrap, as whoever runs the tests: root in CI)', () => {
  test('remount, unshare, mount --bind, chroot, ptrace, /proc/sys writes: none succeed, the host is untouched', { skip: skipBwrap }, async () => {
    const t = task('escape-root');
    // Outside /tmp (the sandbox's /tmp is its own), so a write that lands is a write to the host.
    const hostFile = join('/var/tmp', `jb-attack-host-file-${process.pid}.txt`);
    after(() => rmSync(hostFile, { force: true }));
    writeFileSync(hostFile, 'original\n');
    chmodSync(hostFile, 0o666);
    const hostName = hostname();
    const ptrace = hasPython
      ? `python3 -c 'import ctypes,os; c=ctypes.CDLL(None); print("PTRACE-PARENT-OK" if c.ptrace(16, os.getppid(), 0, 0) == 0 else "ptrace-parent-refused"); print("PTRACE-INIT-OK" if c.ptrace(16, 1, 0, 0) == 0 else "ptrace-init-refused")'`
      : 'echo no-python';
    const script = [
      `mount -o remount,bind,rw / 2>/dev/null && echo REMOUNT-OK && echo pwned > ${hostFile}`,
      'unshare -U true 2>/dev/null && echo UNSHARE-USER-OK',
      `unshare -rm sh -c 'mount -o remount,rw / && echo pwned > ${hostFile}' 2>/dev/null && echo UNSHARE-MOUNT-OK`,
      `mount --bind "$PWD" /etc 2>/dev/null && echo BIND-OK`,
      'chroot / true 2>/dev/null && echo CHROOT-OK',
      ptrace,
      '(echo 1 > /proc/sys/vm/drop_caches) 2>/dev/null && echo PROCSYS-VM-OK',
      '(echo pwned-host > /proc/sys/kernel/hostname) 2>/dev/null && echo PROCSYS-HOSTNAME-OK',
      `(echo pwned >> ${hostFile}) 2>/dev/null && echo HOSTFILE-OK`,
      'echo ATTACKS-DONE',
    ].join('; ');
    const d = await runDatapoint(t, createSolver(`cmd:${script}`), 0, opts({ sandbox: bwrap! }));
    const out = d.solver_run?.output_tail ?? '';
    assert.match(out, /ATTACKS-DONE/, out);
    assert.doesNotMatch(out, /-OK\b/, `an attack succeeded:\n${out}`);
    if (hasPython) assert.match(out, /ptrace-parent-refused[\s\S]*ptrace-init-refused/);
    assert.equal(readFileSync(hostFile, 'utf8'), 'original\n');
    assert.equal(hostname(), hostName);
    assert.equal(readFileSync('/proc/sys/kernel/hostname', 'utf8').trim(), hostName);
    assert.deepEqual(d.escapes, []);
    assert.equal(d.resolved, false);
  });

  test('a fork bomb hits the process cap and the machine carries on', { skip: skipBwrap }, async () => {
    const t = task('fork-bomb');
    // 200 sleepers: the cap (64 here) stops most; then a real bomb for a moment.
    const script = `(for i in $(seq 200); do sleep 5 & done) 2>/dev/null; set -- /proc/[0-9]*; echo "procs=$#"; b() { b | b & }; b 2>/dev/null`;
    const d = await runDatapoint(t, createSolver(`cmd:${script}`), 0, opts({ sandbox: capped!, timeout_s: 3 }));
    const procs = Number(/procs=(\d+)/.exec(d.solver_run?.output_tail ?? '')?.[1]);
    assert.ok(procs > 0 && procs <= 70, `processes inside the sandbox: ${procs}`);
    assert.equal(d.resolved, false);
    assert.deepEqual(d.escapes, []);
  });

  test('the task folder (reference/, task.toml, hidden tests) is not readable from inside', { skip: skipBwrap }, async () => {
    const t = task('peek', { before: { 'src/value.txt': 'broken\n', 'test/check.sh': CHECK } });
    mkdirSync(join(t.dir, 'tests'), { recursive: true });
    writeFileSync(join(t.dir, 'tests', 'secret.txt'), 'hidden\n');
    const reload = loadCodeTask(t.dir);
    const d = await runDatapoint(reload, createSolver(`cmd:cp -r ${t.dir}/reference/. . 2>/dev/null; cat ${t.toml_path} 2>/dev/null && echo TOML-READ; cat ${t.dir}/tests/secret.txt 2>/dev/null && echo HIDDEN-READ; true`), 0, opts({ sandbox: bwrap! }));
    const out = d.solver_run?.output_tail ?? '';
    assert.doesNotMatch(out, /TOML-READ|HIDDEN-READ/, out);
    assert.equal(d.resolved, false, 'copying reference/ must not resolve');
    assert.equal(d.valid, true);
  });

  test('a solver over --memory-mb is stopped and its datapoint is invalid with the reason', async () => {
    const t = task('memory-hog');
    const hog = `cmd:echo fixed > src/value.txt; node -e "const b = Buffer.alloc(300 * 2 ** 20, 1); setTimeout(() => console.log(b.length), 20000)"`;
    const t0 = performance.now();
    const d = await runDatapoint(t, createSolver(hog), 0, opts({ memory_mb: 96, timeout_s: 30 }));
    assert.ok(performance.now() - t0 < 15_000, 'stopped well before its 20 s sleep');
    assert.equal(d.valid, false);
    assert.match(d.invalid_reason ?? '', /memory limit \(--memory-mb 96\)/);
    assert.equal(d.resolved, false);
  });
});

describe('attacks on the oracle without a sandbox (--sandbox none)', () => {
  // A survivor that leaves the process group and the workdir, then keeps rewriting the (restored) test.
  const survivor = () =>
    `cmd:w=$PWD; setsid sh -c "cd /; while :; do echo 'exit 0' > $w/test/check.sh 2>/dev/null; sleep 0.01; done" >/dev/null 2>&1 & sleep 0.2`;

  for (const cgroup of [true, false]) {
    test(`a setsid survivor rewriting the test file during grading is killed first (${cgroup ? 'cgroup when writable' : 'process tree + marker'})`, async () => {
      setCgroupTracking(cgroup);
      try {
        const t = task(`survivor-${cgroup}`);
        const results = [];
        for (let i = 0; i < 3; i++) results.push(await runDatapoint(t, createSolver(survivor()), i, opts()));
        assert.deepEqual(results.map((d) => d.resolved), [false, false, false]);
        for (const d of results) assert.ok((d.solver_run?.stragglers_killed ?? 0) >= 1, `killed ${d.solver_run?.stragglers_killed}`);
        const method = cgroup && cgroupV2Base() !== null ? 'cgroup' : 'process-tree';
        assert.deepEqual(results.map((d) => d.solver_run?.tracking), [method, method, method]);
      } finally {
        setCgroupTracking(true);
      }
    });
  }

  // Its main thread exits at once, so /proc shows it as a zombie ("Z") while a thread keeps rewriting the test file.
  const threadSurvivor = join(tmp, 'thread-survivor.py');
  writeFileSync(
    threadSurvivor,
    [
      'import ctypes, os, sys, threading, time',
      'w = os.getcwd()',
      'def loop():',
      "    os.chdir('/')",
      "    while open('/proc/self/stat').read().rsplit(')', 1)[1].split()[0] != 'Z':",
      '        time.sleep(0.01)',
      "    open(sys.argv[1], 'w').close()",
      '    while True:',
      '        try:',
      "            open(w + '/test/check.sh', 'w').write('exit 0\\n')",
      '        except OSError:',
      '            pass',
      '        time.sleep(0.01)',
      'threading.Thread(target=loop).start()',
      'ctypes.CDLL(None).pthread_exit(None)',
      '',
    ].join('\n'),
  );
  for (const cgroup of [true, false]) {
    test(`a survivor whose main thread exited (a zombie in /proc, a live thread) is killed and counted (${cgroup ? 'cgroup when writable' : 'process tree'})`, { skip: !hasPython && 'python3 not installed' }, async () => {
      setCgroupTracking(cgroup);
      try {
        const t = task(`thread-survivor-${cgroup}`);
        // The solver ends only once the main thread is gone (the thread writes `ready` when /proc says "Z").
        const ready = join(tmp, `thread-survivor-${cgroup}.ready`);
        const solver = `cmd:setsid python3 ${threadSurvivor} ${ready} >/dev/null 2>&1 & while [ ! -e ${ready} ]; do sleep 0.02; done`;
        const d = await runDatapoint(t, createSolver(solver), 0, opts());
        assert.equal(d.resolved, false, 'the rewritten test must not grade the broken code as fixed');
        assert.ok((d.solver_run?.stragglers_killed ?? 0) >= 1, `killed ${d.solver_run?.stragglers_killed}`);
      } finally {
        setCgroupTracking(true);
      }
    });
  }

  test('a fix that patches node:assert from the code under test is not a fix (the guard freezes it)', async () => {
    const t = loadCodeTask(
      writeShellTask(suite, {
        name: 'assert-patch',
        toml: 'name = "assert-patch"\nprompt = "fix add"\ntest_cmd = "node test/add.test.mjs"\ntest_files = ["test/add.test.mjs"]\ntest_timeout_s = 30',
        before: {
          'package.json': '{ "type": "module" }\n',
          'src/add.mjs': 'export const add = (a, b) => a - b;\n',
          'test/add.test.mjs': "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { add } from '../src/add.mjs';\ntest('adds', () => assert.equal(add(2, 2), 4));\n",
        },
        reference: { 'src/add.mjs': 'export const add = (a, b) => a + b;\n' },
      }),
    );
    const patch = `import assert from 'node:assert/strict';\\nimport a2 from 'node:assert';\\nfor (const x of [assert, a2]) { try { x.equal = () => {}; x.deepEqual = () => {}; } catch {} }\\nexport const add = (a, b) => a - b;\\n`;
    const d = await runDatapoint(t, createSolver(`cmd:printf "${patch}" > src/add.mjs`), 0, opts());
    assert.equal(d.valid, true);
    assert.equal(d.resolved, false, 'patching assert must not pass');
    assert.equal((await runDatapoint(t, createSolver('reference'), 0, opts())).resolved, true, 'the guard leaves honest tests alone');
  });

  test('a diff touching the test harness (scripts.test, .mocharc, node_modules/, .npmrc) is listed and not resolved', async () => {
    const t = task('harness', {
      before: { 'package.json': '{ "scripts": { "test": "sh test/check.sh" } }\n', 'src/value.txt': 'broken\n', 'test/check.sh': CHECK },
    });
    const fix = 'echo fixed > src/value.txt';
    const cases: [string, string][] = [
      [`${fix}; echo '{ "scripts": { "test": "true" } }' > package.json`, 'package.json#scripts.test'],
      [`${fix}; echo 'require: cheat.js' > .mocharc.yml`, '.mocharc.yml'],
      [`${fix}; mkdir -p node_modules/chai && echo x > node_modules/chai/index.js`, 'node_modules/'],
      [`${fix}; echo 'node-options=--require ./cheat.js' > .npmrc`, '.npmrc'],
    ];
    for (const [cmd, entry] of cases) {
      const d = await runDatapoint(t, createSolver(`cmd:${cmd}`), 0, opts());
      assert.equal(d.grade?.exit_code, 0, `${entry}: the fix itself works`);
      assert.ok(d.tests_modified.includes(entry), `${entry} in ${JSON.stringify(d.tests_modified)}`);
      assert.equal(d.resolved, false, entry);
    }
    assert.equal((await runDatapoint(t, createSolver(`cmd:${fix}`), 0, opts())).resolved, true);
  });
});

describe('hidden grading tests, fail_to_pass and pass_to_pass (SWE-bench rule)', () => {
  const toml = (name: string) =>
    [`name = "${name}"`, 'prompt = "make src/value.txt say fixed, keep src/other.txt"', 'test_cmd = "sh {test}"', 'test_format = "tap"', 'fail_to_pass = ["test/hidden.sh"]', 'pass_to_pass = ["test/keep.sh"]', 'test_files = ["test/keep.sh"]', 'test_timeout_s = 10'].join('\n');
  const before = { 'src/value.txt': 'broken\n', 'src/other.txt': 'ok\n', 'test/keep.sh': tapCheck('grep -qx ok src/other.txt') };

  function hiddenTask(name: string, b: Record<string, string> = before): CodeTask {
    const dir = writeShellTask(suite, { name, toml: toml(name), before: b });
    mkdirSync(join(dir, 'tests', 'test'), { recursive: true });
    writeFileSync(join(dir, 'tests', 'test', 'hidden.sh'), CHECK);
    return loadCodeTask(dir);
  }

  test('the solver never sees the hidden tests; reference resolves, noop does not, breaking pass_to_pass fails', async () => {
    const t = hiddenTask('hidden');
    assert.ok(t.tests_dir);
    const peek = await runDatapoint(t, createSolver('cmd:ls test; cat test/hidden.sh 2>/dev/null && echo SAW-HIDDEN; echo fixed > src/value.txt'), 0, opts());
    assert.doesNotMatch(peek.solver_run?.output_tail ?? '', /SAW-HIDDEN|hidden\.sh/);
    assert.equal(peek.resolved, true);
    assert.deepEqual(peek.grade?.tests, { 'test/hidden.sh': 'pass', 'test/keep.sh': 'pass' });
    assert.deepEqual(peek.baseline.tests, { 'test/hidden.sh': 'fail', 'test/keep.sh': 'pass' });
    assert.equal((await runDatapoint(t, createSolver('reference'), 0, opts())).resolved, true);
    assert.equal((await runDatapoint(t, createSolver('noop'), 0, opts())).resolved, false);
    const breaks = await runDatapoint(t, createSolver('cmd:echo fixed > src/value.txt; echo broke > src/other.txt'), 0, opts());
    assert.equal(breaks.resolved, false);
    assert.equal(breaks.grade?.tests?.['test/keep.sh'], 'fail');
    // A solver that writes its own test/hidden.sh does not replace the hidden one.
    const plant = await runDatapoint(t, createSolver('cmd:echo true > test/hidden.sh'), 0, opts());
    assert.equal(plant.resolved, false);
  });

  test('a fail_to_pass test that already passes, or a pass_to_pass test that fails, makes the task invalid', async () => {
    const passes = hiddenTask('f2p-passes', { ...before, 'src/value.txt': 'fixed\n' });
    const d1 = await runDatapoint(passes, createSolver('noop'), 0, opts());
    assert.equal(d1.valid, false);
    assert.match(d1.invalid_reason ?? '', /fail_to_pass test\(s\) already pass before the solver runs: test\/hidden\.sh/);
    const broken = hiddenTask('p2p-fails', { ...before, 'src/other.txt': 'no\n' });
    const d2 = await runDatapoint(broken, createSolver('noop'), 0, opts());
    assert.equal(d2.valid, false);
    assert.match(d2.invalid_reason ?? '', /pass_to_pass test\(s\) do not pass before the solver runs: test\/keep\.sh/);
  });
});

describe('cmd: solvers that live anywhere', () => {
  test('a script under /tmp (outside the workdir) runs inside the sandbox, bound read-only at its path', async () => {
    const t = task('script-in-tmp');
    const scriptDir = tempDir('jb-agent-');
    try {
      const agent = join(scriptDir, 'agent.sh');
      writeFileSync(agent, '#!/bin/sh\necho fixed > src/value.txt\ntouch "$0" 2>/dev/null && echo SCRIPT-WRITABLE\necho AGENT-RAN\n');
      chmodSync(agent, 0o755);
      for (const sandbox of bwrap ? [bwrap, noSandbox()] : [noSandbox()]) {
        const d = await runDatapoint(t, createSolver(`cmd:${agent} {prompt}`), 0, opts({ sandbox }));
        assert.match(d.solver_run?.output_tail ?? '', /AGENT-RAN/, `${sandbox.kind}: ${JSON.stringify(d)}`);
        assert.equal(d.resolved, true, sandbox.kind);
        if (sandbox.kind === 'bwrap') assert.doesNotMatch(d.solver_run?.output_tail ?? '', /SCRIPT-WRITABLE/);
      }
    } finally {
      rmSync(scriptDir, { recursive: true, force: true });
    }
  });

  test('a solver that starts no other process reports no leftover process killed', async () => {
    const t = task('no-leftover');
    for (const sandbox of bwrap ? [bwrap, noSandbox()] : [noSandbox()]) {
      for (let i = 0; i < 4; i++) {
        const d = await runDatapoint(t, createSolver('cmd:echo fixed > src/value.txt; echo done'), i, opts({ sandbox }));
        assert.equal(d.resolved, true, sandbox.kind);
        assert.equal(d.solver_run?.stragglers_killed, 0, `${sandbox.kind} #${i}: an exited process is not a straggler`);
      }
    }
  });

  test('a missing command makes the datapoint invalid with the reason (not a 0 % solver)', async () => {
    const t = task('missing');
    const d = await runDatapoint(t, createSolver('cmd:no-such-agent-xyz {prompt}'), 0, opts());
    assert.equal(d.valid, false);
    assert.match(d.invalid_reason ?? '', /^solver not available: command not found \(exit 127: .*no-such-agent-xyz.*not found\)/);
    const preset = await runDatapoint(t, createSolver('aider'), 0, opts({ env: { PATH: `${join(tmp, 'empty-bin')}:/usr/bin:/bin` } }));
    assert.equal(preset.valid, false);
    assert.match(preset.invalid_reason ?? '', /aider is not installed/);
  });
});
