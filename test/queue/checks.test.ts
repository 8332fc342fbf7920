import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { armJobOf } from '../../src/queue/arm-job.js';
import { parseQueueUrl } from '../../src/queue/connection.js';
import { runArmsOnQueue } from '../../src/queue/coordinator.js';
import { VERSION } from '../../src/version.js';
import { BIN, cli } from '../helpers/cli.js';
import { redisMissing, startRedis, type TestRedis } from '../helpers/redis.js';

const PASSWORD = 'checks-pw-K2v9-not-for-logs';
const OTHER_VERSION = '0.0.0-other';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const missing = redisMissing();

// Nothing here reaches an endpoint: every job is refused before its arm runs, and the credentials
// are refused before any job is taken.
describe('queue checks: another version, another suite, wrong credentials', { skip: missing ?? false }, () => {
  let redis: TestRedis;
  let dir: string;
  let plan: string;
  const children: ChildProcess[] = [];

  before(async () => {
    redis = await startRedis({ password: PASSWORD });
    dir = mkdtempSync(join(tmpdir(), 'jb-queue-checks-'));
    writeFileSync(join(dir, 'suite.jsonl'), '{"id":"a","prompt":"say alpha","expected":"alpha"}\n');
    plan = join(dir, 'plan.yaml');
    writeFileSync(plan, `name: checks\nsuites: [${join(dir, 'suite.jsonl')}]\nbaseline: a\narms:\n  - name: a\n    kind: openai\n    endpoint: http://127.0.0.1:9/v1\n    model: m\n`);
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A `joulebench worker` process on the test's Redis, from `bin` (another installed copy, or this one). */
  function worker(bin: string, home: string): { child: ChildProcess; stderr: string[] } {
    const child = spawn(process.execPath, [bin, 'worker', '--queue', redis.url, '--stall-ms', '5000', '--idle-ms', '1'], {
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const w = { child, stderr: [] as string[] };
    child.stderr!.on('data', (d: Buffer) => w.stderr.push(d.toString()));
    children.push(child);
    return w;
  }

  /** The CLI as a user runs it, killed if it is still running after `ms` (code null then). */
  function cliWithin(args: string[], ms: number): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: join(dir, 'home-cli') }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    return new Promise((resolve) => {
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        resolve({ code: signal === 'SIGKILL' ? null : code, stderr });
      });
    });
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  it('a worker of another joulebench version refuses the job with one line naming both; sweep --queue shows it and fails', { timeout: 60_000 }, async () => {
    // Another installed joulebench: this build, its package.json saying another version.
    const other = join(dir, 'other-install');
    mkdirSync(other);
    cpSync(join(ROOT, 'dist'), join(other, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'bin'), join(other, 'bin'), { recursive: true });
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(other, 'package.json'), JSON.stringify({ ...pkg, version: OTHER_VERSION }));
    symlinkSync(join(ROOT, 'node_modules'), join(other, 'node_modules'));
    const w = worker(join(other, 'bin', 'joulebench.js'), mkdtempSync(join(dir, 'home-other-')));
    try {
      const r = await cli(['sweep', plan, '--queue', redis.url, '--out-dir', join(dir, 'sweep-version'), '--no-idle', '--no-history', '--bootstrap', '200']);
      assert.equal(r.code, 1, r.stderr);
      const line = `refused: the coordinator runs joulebench ${VERSION}, this worker joulebench ${OTHER_VERSION} (run one version on both)`;
      assert.ok(r.stderr.split('\n').some((l) => l.startsWith('sweep: failed a × ') && l.endsWith(line)), r.stderr);
      assert.match(r.stderr, /1 of 1 runs did not finish/);
      // Nothing was run with it: no case reached the coordinator's files.
      assert.doesNotMatch(readFileSync(join(dir, 'sweep-version', 'sweep.json'), 'utf8'), /"status": "done"/);
      assert.ok(w.stderr.join('').includes(line), w.stderr.join(''));
    } finally {
      await stop(w.child);
    }
  });

  it('a worker whose suite digest differs from the coordinator\'s refuses the job, naming both digests', { timeout: 60_000 }, async () => {
    const w = worker(BIN, mkdtempSync(join(dir, 'home-same-')));
    try {
      const job = armJobOf('checks-digest', 'a', { suite: join(dir, 'suite.jsonl'), target: 'openai', endpoint: 'http://127.0.0.1:9/v1', model: 'm' });
      assert.equal(job.joulebench_version, VERSION);
      assert.match(job.suite_digest ?? '', /^sha256:[0-9a-f]{64}$/);
      const theirs = `sha256:${'0'.repeat(64)}`;
      const [outcome] = await runArmsOnQueue({
        connection: parseQueueUrl(redis.url, undefined, {}),
        arms: [{ job: { ...job, suite_digest: theirs }, results: join(dir, 'digest.results.jsonl'), report: join(dir, 'digest.json'), receipt: join(dir, 'digest.receipt.json') }],
        poll_ms: 50,
      });
      assert.equal(outcome!.result, null);
      assert.equal(outcome!.error, `refused: suite ${job.suite} is ${theirs} on the coordinator, ${job.suite_digest} on this worker (not the same cases)`);
    } finally {
      await stop(w.child);
    }
  });

  it('wrong Redis credentials: the worker and the coordinator each say so in one line and exit 2 within 10 s; the password is not printed', { timeout: 60_000 }, async () => {
    const wrong = redis.url.replace(encodeURIComponent(PASSWORD), 'not-the-password');
    const none = redis.url.replace(`:${encodeURIComponent(PASSWORD)}@`, '');
    const runs: [string, string[]][] = [
      ['worker, wrong password', ['worker', '--queue', wrong, '--idle-ms', '1']],
      ['worker, no password', ['worker', '--queue', none, '--idle-ms', '1']],
      ['coordinator, wrong password', ['sweep', plan, '--queue', wrong, '--out-dir', join(dir, 'sweep-auth'), '--no-idle', '--no-history']],
    ];
    for (const [what, args] of runs) {
      const r = await cliWithin(args, 10_000);
      assert.equal(r.code, 2, `${what}: ${r.code === null ? 'still running after 10 s' : r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`redis://127\\.0\\.0\\.1:${redis.port}/0: Redis refused the queue's credentials \\((WRONGPASS|NOAUTH)`), what);
      assert.ok(!r.stderr.includes('not-the-password') && !r.stderr.includes(PASSWORD), `${what}: a password was printed`);
    }
  });
});
