import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { machine } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CodeResults } from '../../src/code/results.js';
import { swebenchArch, swebenchImage } from '../../src/code/swebench.js';
import { BIN, cli } from '../helpers/cli.js';
import { fakeDocker } from '../helpers/fake-docker.js';
import { tempDir } from './helpers.js';
import { buildSwebenchFixture } from './swebench-fixture.js';

/*
 * `--runner docker` against a fake docker client (test/helpers/fake-docker.ts): no Docker engine runs
 * on the development machine or on CI. The fake maps an image to a folder holding `testbed/` (here a
 * clone of the instance's repository at base_commit, as SWE-bench's images hold it), runs `exec` on
 * this machine, and records every argv: joulebench's side — naming, confinement flags, patches,
 * grading, removal — is the real code.
 */

const tmp = tempDir('jb-docker-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const fx = buildSwebenchFixture(tmp);
const docker = fakeDocker(tmp);
const arch = swebenchArch(machine());
const imageOf = (id: string, namespace: string | null = 'swebench') => swebenchImage(id, { namespace, arch });

/** An image root file system whose /testbed is the mirror checked out at `commit`. */
function rootfsAt(commit: string, name: string): string {
  const rootfs = join(tmp, 'rootfs', name);
  mkdirSync(rootfs, { recursive: true });
  execFileSync('git', ['clone', '-q', fx.repo, join(rootfs, 'testbed')]);
  execFileSync('git', ['-C', join(rootfs, 'testbed'), 'checkout', '-q', commit]);
  return rootfs;
}
const atBase = rootfsAt(fx.base, 'base');
for (const inst of fx.instances) docker.addImage(imageOf(inst.instance_id), atBase);
// A stale image: /testbed at the later commit that holds the fixes, not at base_commit.
const future = execFileSync('git', ['-C', fx.repo, 'rev-parse', 'HEAD']).toString().trim();
docker.addImage(imageOf('acme__calc-2', 'stale'), rootfsAt(future, 'future'));

const base = ['code', '--suite', fx.jsonl, '--repos', fx.repos, '--test-cmd', 'node {test}', '--runner', 'docker', '--no-history'];
const run = (args: string[], env: Record<string, string> = {}) => cli([...base, ...args], { env: { ...docker.env, ...env } });
const results = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as CodeResults;

/** The `docker run` calls (and the container names they gave) made since call number `from`. */
function runCalls(from: number): { name: string; argv: string[] }[] {
  return docker
    .calls()
    .slice(from)
    .filter((c) => c[0] === 'run')
    .map((argv) => ({ name: argv[argv.indexOf('--name') + 1]!, argv }));
}
const hasPair = (argv: string[], flag: string, value: string) => argv.some((a, i) => a === flag && argv[i + 1] === value);

/** The real docker client on PATH, if any. */
function whichDocker(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'docker'))) return join(dir, 'docker');
  return null;
}

/** Alive and not a zombie. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('--runner docker (SWE-bench instance images, against a fake docker client)', () => {
  test('SWE-bench image names: namespace, __ → _1776_, lower case, tag, arch, and no namespace for local builds', () => {
    assert.equal(swebenchImage('astropy__astropy-12907'), 'swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest');
    assert.equal(swebenchImage('Org__Repo-7', { namespace: 'my.registry/team', tag: 'v2', arch: 'arm64' }), 'my.registry/team/sweb.eval.arm64.org_1776_repo-7:v2');
    assert.equal(swebenchImage('django__django-11099', { namespace: null }), 'sweb.eval.x86_64.django__django-11099:latest');
    assert.equal(swebenchArch('aarch64'), 'arm64');
    assert.equal(swebenchArch('x86_64'), 'x86_64');
  });

  test('grades in a confined, removed container per phase: reference resolves, edited tests are listed and not resolved', async () => {
    const agent = join(tmp, 'tamper.sh');
    // Replaces the instances' graded tests with ones that always pass, and fixes nothing.
    writeFileSync(agent, `#!/bin/sh\nmkdir -p test\nfor f in add mul; do printf 'import { test } from "node:test";\\ntest("ok", () => {});\\n' > test/$f.test.js; done\n`, { mode: 0o755 });
    const out = join(tmp, 'r.json');
    const from = docker.calls().length;
    const r = await run(['--tasks', 'acme__calc-1', '--solvers', `reference,tamper=cmd:${agent}`, '--memory-mb', '512', '--max-procs', '256', '-q', '--out', out], { OPENAI_API_KEY: 'sk-not-for-containers' });
    assert.equal(r.code, 0, r.stderr);
    const res = results(out);
    assert.equal(res.config.runner?.kind, 'docker');
    const by = (s: string) => res.datapoints.filter((d) => d.solver === s);
    assert.deepEqual(by('reference').map((d) => d.resolved), [true]);
    assert.deepEqual(by('tamper').map((d) => [d.resolved, d.tests_modified]), [[false, ['test/add.test.js']]]);
    for (const d of res.datapoints) {
      assert.equal(d.valid, true, d.invalid_reason ?? '');
      assert.equal(d.runner, 'docker');
      assert.equal(d.image, imageOf(d.task));
      assert.match(d.image_id ?? '', /^sha256:[0-9a-f]{64}$/);
    }
    assert.deepEqual(by('reference')[0]?.baseline.tests, { 'test/add.test.js': 'fail', 'test/keep.test.js': 'pass' });
    assert.deepEqual(by('reference')[0]?.grade?.tests, { 'test/add.test.js': 'pass', 'test/keep.test.js': 'pass' });
    assert.deepEqual(by('tamper')[0]?.grade?.tests, { 'test/add.test.js': 'fail', 'test/keep.test.js': 'pass' });

    const calls = docker.calls().slice(from);
    const runs = runCalls(from);
    assert.equal(runs.length, 4, 'a fresh container for the baseline and for the grade of each of 2 datapoints');
    assert.equal(new Set(runs.map((c) => c.name)).size, runs.length, 'container names are unique');
    for (const { name, argv } of runs) {
      assert.ok(hasPair(argv, '--network', 'none'), argv.join(' '));
      assert.ok(hasPair(argv, '--cap-drop', 'ALL'));
      assert.ok(hasPair(argv, '--security-opt', 'no-new-privileges'));
      assert.ok(hasPair(argv, '--pids-limit', '256'));
      assert.ok(hasPair(argv, '--memory', '512m'));
      assert.ok(hasPair(argv, '--memory-swap', '512m'), 'no swap beyond the memory limit');
      assert.ok(hasPair(argv, '--pull', 'never'), 'docker run never pulls by itself');
      assert.ok(argv.includes('--rm'));
      // Its own process ends by itself after the phase's budget (2 tests × 300 s + 900 s), should joulebench die outright.
      assert.deepEqual([argv.at(-4), argv.at(-3), argv.at(-1)], ['--entrypoint', 'sleep', '1500']);
      for (const bad of ['-v', '--volume', '--mount', '--privileged', '--cap-add', '-e', '--env', '--network=host']) assert.ok(!argv.includes(bad), `${bad} in ${argv.join(' ')}`);
      const i = calls.findIndex((c) => c[0] === 'run' && c.includes(name));
      assert.ok(calls.slice(i + 1).some((c) => c[0] === 'rm' && c[1] === '--force' && c[2] === name), `${name} removed`);
    }
    // Nothing of the host's environment is handed to a container, and only the diff and test_patch go in (on stdin).
    for (const c of calls.filter((c) => c[0] === 'exec')) assert.ok(!c.includes('-e') && !c.includes('--env'), c.join(' '));
    assert.ok(calls.some((c) => c[0] === 'exec' && c.includes('git apply --whitespace=nowarn -')));
    assert.deepEqual(docker.containers(), [], 'no container is left');
    assert.ok(!calls.some((c) => c[0] === 'pull'), 'nothing pulled without --pull');

    const csv = join(tmp, 'r.csv');
    const [table, toCsv] = await Promise.all([cli(['code', '--report', out]), cli(['code', '--report', out, '--out', csv])]);
    assert.match(table.stdout, /tests in docker/);
    assert.equal(toCsv.code, 0);
    assert.match(readFileSync(csv, 'utf8'), new RegExp(imageOf('acme__calc-1').replace(/[.]/g, '\\.')));
  });

  test('the real docker client, where installed, parses every argv the runner used (it reaches no engine: an unreachable DOCKER_HOST)', (t) => {
    const real = whichDocker();
    if (!real) return t.skip('no docker client on PATH (the fake is all there is here)');
    const seen = new Map<string, string[]>();
    for (const c of docker.calls()) seen.set(`${c[0]} ${c.filter((a) => a.startsWith('-')).join(' ')}`, c);
    assert.ok(seen.size >= 6, [...seen.keys()].join('\n'));
    for (const argv of seen.values()) {
      const r = spawnSync(real, argv, { env: { PATH: process.env.PATH ?? '', DOCKER_HOST: `unix://${tmp}/no-engine.sock`, DOCKER_CONFIG: join(tmp, 'docker-config') }, input: '', encoding: 'utf8', timeout: 30_000 });
      assert.doesNotMatch(r.stderr, /unknown (flag|shorthand)|invalid argument|requires (at least|exactly)|accepts/i, argv.join(' '));
      assert.match(r.stderr, /Cannot connect to the Docker daemon/, `${argv.join(' ')}: ${r.stderr}`);
    }
  });

  test('a test past its limit kills and removes its container at once (not only the client); the datapoint is not resolved', async () => {
    const pids = join(tmp, 'pids.txt');
    const out = join(tmp, 'slow.json');
    const from = docker.calls().length;
    // The graded tree holds SLOW (the solver made it): the test command then sleeps in the container.
    const testCmd = `if [ -f SLOW ]; then echo $$ >> ${pids}; exec sleep 120; fi; node {test}`;
    const r = await cli(
      ['code', '--suite', fx.jsonl, '--repos', fx.repos, '--test-cmd', testCmd, '--runner', 'docker', '--no-history', '--tasks', 'acme__calc-1', '--test-timeout', '2', '--solvers', 'slow=cmd:touch SLOW', '-q', '--out', out],
      { env: docker.env },
    );
    assert.equal(r.code, 0, r.stderr);
    const d = results(out).datapoints[0]!;
    assert.equal(d.valid, true, d.invalid_reason ?? '');
    assert.equal(d.resolved, false);
    assert.equal(d.grade?.timed_out, true);
    assert.deepEqual(d.grade?.tests, { 'test/add.test.js': 'timeout', 'test/keep.test.js': 'timeout' });
    const pid = Number(readFileSync(pids, 'utf8').trim().split('\n')[0]);
    assert.ok(pid > 0);
    assert.equal(alive(pid), false, 'the sleeping test process was killed with its container');
    const calls = docker.calls().slice(from);
    const grade = runCalls(from).find((c) => c.name.includes('-grade-'))!;
    const execs = calls.map((c, i) => [c, i] as const).filter(([c]) => c[0] === 'exec' && c.includes(grade.name));
    const rmAt = calls.findIndex((c) => c[0] === 'rm' && c[2] === grade.name);
    assert.equal(execs.length, 3, 'apply test_patch, then the timed-out test; the second test never ran');
    assert.ok(rmAt > execs.at(-1)![1], 'removed right after the timed-out exec');
    assert.deepEqual(docker.containers(), []);
  });

  test('Ctrl-C removes the running container and what runs in it', async () => {
    const pids = join(tmp, 'sigint-pids.txt');
    const testCmd = `echo $$ >> ${pids}; exec sleep 120 # {test}`;
    const child = spawn(
      process.execPath,
      [BIN, 'code', '--suite', fx.jsonl, '--repos', fx.repos, '--test-cmd', testCmd, '--runner', 'docker', '--no-history', '--tasks', 'acme__calc-1', '--solvers', 'noop', '-q', '--out', join(tmp, 'sigint.json')],
      { env: { ...process.env, ...docker.env, NO_COLOR: '1', JOULEBENCH_HOME: join(tmp, 'home') }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('close', res));
    after(() => void (child.exitCode === null && child.kill('SIGKILL')));
    const deadline = Date.now() + 20_000;
    while (!(existsSync(pids) && docker.containers().length === 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(docker.containers().length, 1, 'a baseline container is running');
    const pid = Number(readFileSync(pids, 'utf8').trim().split('\n')[0]);
    assert.equal(alive(pid), true, `pid ${pid}: ${existsSync('/proc/' + pid) ? readFileSync('/proc/' + pid + '/stat', 'utf8') : 'gone'} ${stderr}`);
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /removed 1 container\(s\)/);
    assert.deepEqual(docker.containers(), []);
    assert.equal(alive(pid), false, 'the test process in the container was killed with it');
  });

  test('a missing image makes the datapoint invalid with its name (exit 2 when every one is); --pull tries, a stale image is refused', async () => {
    const out = join(tmp, 'missing.json');
    const from = docker.calls().length;
    const r = await run(['--namespace', 'nowhere', '--solvers', 'noop,reference', '-q', '--out', out]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 3, r.stderr);
    assert.match(lines[0]!, /acme__calc-1: image not available: nowhere\/sweb\.eval\.[a-z0-9_]+\.acme_1776_calc-1:latest is not present locally .*--pull/);
    assert.match(lines[2]!, /^joulebench: --runner docker: no instance's image is present/);
    for (const d of results(out).datapoints) {
      assert.equal(d.valid, false);
      assert.equal(d.solver_run, null, 'no solver ran for an instance without its image');
      assert.equal(d.image, imageOf(d.task, 'nowhere'));
    }
    assert.ok(!docker.calls().slice(from).some((c) => c[0] === 'run' || c[0] === 'pull'));

    const pulled = join(tmp, 'pulled.json');
    const from2 = docker.calls().length;
    const p = await run(['--namespace', 'nowhere', '--pull', '--tasks', 'acme__calc-1', '--solvers', 'noop', '-q', '--out', pulled]);
    assert.equal(p.code, 2);
    assert.ok(docker.calls().slice(from2).some((c) => c[0] === 'pull' && c[1] === imageOf('acme__calc-1', 'nowhere')));
    assert.match(results(pulled).datapoints[0]?.invalid_reason ?? '', /docker pull failed \(.*no such host\)/);

    const broken = join(tmp, 'broken.json');
    const b = await run(['--tasks', 'acme__calc-1', '--solvers', 'noop', '-q', '--out', broken], { FAKE_DOCKER_RUN_FAIL: '1' });
    assert.equal(b.code, 1, b.stderr);
    assert.match(results(broken).datapoints[0]?.invalid_reason ?? '', /^docker run \S+ failed \(.*OCI runtime create failed\)$/, 'Docker failing is not a 0 % grade');

    const stale = join(tmp, 'stale.json');
    const s = await run(['--namespace', 'stale', '--tasks', 'acme__calc-2', '--solvers', 'reference', '-q', '--out', stale]);
    assert.equal(s.code, 1, 'every datapoint invalid, not for a missing image: a failed run');
    assert.match(results(stale).datapoints[0]?.invalid_reason ?? '', /\/testbed is at [0-9a-f]{12}, not the instance's base_commit/);
    assert.deepEqual(docker.containers(), []);
  });

  test('no engine, or no client: one line, exit 2; --runner docker on a task folder: one line, exit 2', async () => {
    const [noEngine, noClient, folder] = await Promise.all([
      run([], { FAKE_DOCKER_NO_ENGINE: '1' }),
      run([], { JOULEBENCH_DOCKER_BIN: join(tmp, 'no-such-docker') }),
      cli(['code', '--suite', 'smoke', '--runner', 'docker', '--no-history'], { env: docker.env }),
    ]);
    assert.equal(noEngine.code, 2);
    assert.equal(noEngine.stderr.trim().split('\n').length, 1, noEngine.stderr);
    assert.match(noEngine.stderr, /^joulebench: --runner docker: docker cannot reach an engine \(Cannot connect to the Docker daemon/);
    assert.equal(noClient.code, 2);
    assert.match(noClient.stderr, /^joulebench: --runner docker: docker is not installed; use --runner local\n$/);
    assert.equal(folder.code, 2);
    assert.match(folder.stderr, /^joulebench: --runner docker applies to SWE-bench instances/);
  });
});
