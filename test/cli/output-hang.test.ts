import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN } from '../helpers/cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-out-hang-'));
const home = join(dir, 'home');
const p = (f: string): string => join(dir, f);
let socketServer: Server;
before(async () => {
  execFileSync('mkfifo', [p('fifo.json')]);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(p('sock.json'), resolve));
});
after(() => {
  socketServer.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** ms from the SIGTERM (or from the start, without one) to the exit. */
  after_ms: number;
  /** False when the test had to SIGKILL it: it hung. */
  ended: boolean;
}

/** Runs the CLI and SIGKILLs it after `deadlineMs` (a hang fails the test rather than the suite); `termAtMs` sends a SIGTERM first. */
function runFor(args: string[], deadlineMs: number, opts: { termAtMs?: number; termWhen?: () => boolean } = {}): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let from = Date.now();
    let ended = true;
    let termed = false;
    const term = () => {
      if (termed || child.exitCode !== null || child.signalCode !== null) return;
      termed = true;
      from = Date.now();
      child.kill('SIGTERM');
      setTimeout(() => {
        ended = false;
        child.kill('SIGKILL');
      }, deadlineMs).unref();
    };
    const poll = opts.termWhen ? setInterval(() => opts.termWhen!() && term(), 20) : null;
    const termTimer = opts.termAtMs !== undefined ? setTimeout(term, opts.termAtMs) : null;
    const kill = opts.termAtMs === undefined && !opts.termWhen ? setTimeout(() => ((ended = false), child.kill('SIGKILL')), deadlineMs) : null;
    child.on('error', reject);
    child.on('close', (code, signal) => {
      for (const t of [termTimer, kill]) if (t) clearTimeout(t);
      if (poll) clearInterval(poll);
      resolve({ code, signal, stderr, after_ms: Date.now() - from, ended });
    });
  });
}

const oneLine = (r: Ended, path: string, flag: string, why: RegExp, what: string): void => {
  assert.ok(r.ended, `${what}: hung (${r.stderr})`);
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.ok(lines[0]!.includes(`${flag} ${path}`), r.stderr);
  assert.match(lines[0]!, why);
};

describe('an output that could block is refused before anything runs', () => {
  it('a FIFO, a unix socket, /proc and /sys, a device other than /dev/null: one line naming the flag, exit 2', async () => {
    const run = ['run', '-q', '--no-history', '--suite', 'mt', '--limit', '2'];
    const fifo = p('fifo.json');
    const sock = p('sock.json');
    const cases: [string[], string, string, RegExp][] = [
      [[...run, '--out', fifo], fifo, '--out', /FIFO/],
      [[...run, '--results', fifo], fifo, '--results', /FIFO/],
      [[...run, '--receipt', fifo], fifo, '--receipt', /FIFO/],
      [[...run, '--out', sock], sock, '--out', /a socket/],
      [[...run, '--out', '/proc/self/fd/2.json'], '/proc/self/fd/2.json', '--out', /under \/proc/],
      [[...run, '--out', '/dev/zero'], '/dev/zero', '--out', /character device/],
      [['sweep', '--no-history', '--no-idle', '--out-dir', '/proc/x', p('plan.yaml')], '/proc/x', '--out-dir', /under \/proc/],
      [['sweep', '--no-history', '--no-idle', '--out-dir', '/sys/x', p('plan.yaml')], '/sys/x', '--out-dir', /under \/sys/],
    ];
    writeFileSync(p('plan.yaml'), 'name: p\nsuites: [mt]\narms:\n  - name: a\n    kind: echo\n');
    // All at once: each is refused in well under a second, or hangs until the deadline.
    const ends = await Promise.all(cases.map(([args]) => runFor(args, 20_000)));
    ends.forEach((r, i) => oneLine(r, cases[i]![1], cases[i]![2], cases[i]![3], cases[i]![0].join(" ")));
    assert.ok(!existsSync(join(dir, '.joulebench', 'runs')) || readdirSync(join(dir, '.joulebench', 'runs')).length === 0, 'no run wrote anything');
  });

  it('SIGTERM ends a run within 2 s: one waiting on its target, and one whose receipt is a FIFO', async () => {
    const server = await startFakeOpenAI(() => ({ kind: 'hang' }));
    try {
      const waiting = await runFor(['run', '-q', '--no-history', '-t', 'openai', '--endpoint', server.url, '--model', 'm', '--suite', 'mt', '-o', p('hang.json')], 2000, { termWhen: () => server.seen.length > 0 });
      assert.ok(waiting.ended, `still running 2 s after SIGTERM: ${waiting.stderr}`);
      assert.equal(waiting.code, 143, waiting.stderr);
    } finally {
      await server.close();
    }
    // The receipt is written once the cases are done: a FIFO there would block that open with the
    // signal handlers in place, so the run must be refused (or end on SIGTERM) before that.
    const fifo = await runFor(['run', '-q', '--no-history', '--suite', 'mt', '--receipt', p('fifo.json')], 2000, { termAtMs: 1500 });
    assert.ok(fifo.ended, `still running 2 s after SIGTERM: ${fifo.stderr}`);
  });
});
