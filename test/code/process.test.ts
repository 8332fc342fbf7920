import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { execTree } from '../../src/code/process.js';
import { parseProcStat } from '../../src/code/proc-state.js';

import { tempDir } from './helpers.js';

const tmp = tempDir();
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Running (not a zombie awaiting its reaper), polled for up to a second so a dying process can go. */
async function alive(pid: number): Promise<boolean> {
  for (let i = 0; i < 20; i++) {
    let state: string | undefined;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    } catch {
      return false;
    }
    if (state === 'Z' || state === 'X') return false;
    await new Promise((res) => setTimeout(res, 50));
  }
  return true;
}

describe('execTree', () => {
  test('exit code and output', async () => {
    const r = await execTree(['sh', '-c', 'echo out; echo err >&2; exit 3'], { cwd: tmp, env: process.env, timeout_ms: 10_000 });
    assert.equal(r.exit_code, 3);
    assert.equal(r.stdout, 'out\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.timed_out, false);
  });

  test('a timeout kills the whole tree, children included, quickly', async () => {
    const pids = join(tmp, 'tree.pids');
    const t0 = performance.now();
    const r = await execTree(['sh', '-c', `sleep 30 & echo $! > ${pids}; sh -c 'sleep 30' & echo $! >> ${pids}; wait`], {
      cwd: tmp,
      env: process.env,
      timeout_ms: 300,
      kill_grace_ms: 200,
    });
    assert.equal(r.timed_out, true);
    assert.ok(performance.now() - t0 < 5000, 'returned long before the sleeps would end');
    for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) assert.equal(await alive(pid), false, `pid ${pid} survived`);
  });

  test('a command that ignores SIGTERM is SIGKILLed after the grace', async () => {
    const r = await execTree(['sh', '-c', "trap '' TERM; while :; do sleep 0.05; done"], { cwd: tmp, env: process.env, timeout_ms: 200, kill_grace_ms: 200 });
    assert.equal(r.timed_out, true);
    assert.equal(r.signal, 'SIGKILL');
  });

  test('children left running after the command exits are killed and counted', async () => {
    const pids = join(tmp, 'bg.pids');
    const r = await execTree(['sh', '-c', `sleep 30 >/dev/null 2>&1 & echo $! > ${pids}; exit 0`], { cwd: tmp, env: process.env, timeout_ms: 10_000 });
    assert.equal(r.exit_code, 0);
    assert.equal(r.stragglers_killed, 1);
    const pid = Number(readFileSync(pids, 'utf8').trim());
    assert.equal(await alive(pid), false);
  });

  test('a child that left the group with setsid is found by its working directory and killed', async () => {
    const work = join(tmp, 'sweep');
    mkdirSync(work);
    const pids = join(tmp, 'setsid.pids');
    const r = await execTree(['sh', '-c', `setsid sleep 30 >/dev/null 2>&1 < /dev/null & echo $! > ${pids}; sleep 0.2; exit 0`], {
      cwd: work,
      env: process.env,
      timeout_ms: 10_000,
      sweep_dir: work,
    });
    assert.ok(r.stragglers_killed >= 1);
    const pid = Number(readFileSync(pids, 'utf8').trim());
    assert.equal(await alive(pid), false);
  });

  test('a missing program is reported, not thrown', async () => {
    const r = await execTree(['/nonexistent/agent'], { cwd: tmp, env: process.env, timeout_ms: 1000 });
    assert.match(r.spawn_error ?? '', /ENOENT/);
    assert.equal(r.exit_code, null);
  });
});

describe('parseProcStat: which processes are stragglers', () => {
  // Field 3 is the state, 9 the kernel flags, 20 the thread count (proc(5)); comm may hold spaces and ")".
  const stat = (state: string, flags: number, threads: number) =>
    `9716 (a) b) ${state} 1 9715 9715 0 -1 ${flags} 98 0 0 0 0 0 0 0 20 0 ${threads} 0 4336709 3133440 393 18446744073709551615`;

  test('running, zombie and mid-exit processes', () => {
    assert.equal(parseProcStat(9716, stat('R', 0x400000, 1)).exited, false);
    assert.equal(parseProcStat(9716, stat('Z', 0x40804c, 1)).exited, true);
    // Seen under bwrap: the outer process has ended, its PID-namespace init is still running do_exit (PF_EXITING).
    assert.equal(parseProcStat(9716, stat('R', 4194636, 1)).exited, true);
    const p = parseProcStat(9716, stat('S', 0x400000, 1));
    assert.deepEqual([p.ppid, p.pgrp, p.start], [1, 9715, '4336709']);
  });

  test('a process whose main thread exited while another runs is no zombie', () => {
    assert.equal(parseProcStat(9716, stat('Z', 0x40800c, 2)).exited, false);
  });
});
