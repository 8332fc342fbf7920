import { cwdInside, listProcs } from './proc-state.js';
import { attempt } from './attempt.js';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Sandbox, WrapOptions } from './sandbox.js';
import { ProcessTracker, type TrackerReport } from './tracker.js';

/** How to run one command tree. */
export interface ExecTreeOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Wall-clock limit, ms; past it the whole process group is signalled. */
  timeout_ms: number;
  /** Between SIGTERM and SIGKILL on timeout, ms. */
  kill_grace_ms?: number;
  /** Bytes of stdout and of stderr kept (the tail: agents print their JSON summary last). */
  max_output_bytes?: number;
  /** Also kill processes still running with a cwd inside this folder after the command ends (Linux /proc). */
  sweep_dir?: string;
  /** Opened read-only and handed to the command as file descriptors 3, 4, … (bwrap's --seccomp). */
  fd_files?: readonly string[];
  /** Tracks every process the command starts (cgroup, process tree, marker) and enforces its memory limit. */
  tracker?: ProcessTracker;
  /** Written to the command's stdin (without it, stdin is /dev/null). */
  input?: string;
}

/** What happened to a command tree. */
export interface ExecTreeResult {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  wall_ms: number;
  stdout: string;
  stderr: string;
  /** Processes left running after the command ended (background children, daemons) that were killed. */
  stragglers_killed: number;
  /** Set when the command could not be started. */
  spawn_error: string | null;
  /** What the tracker saw (when one was given). */
  tracking: TrackerReport | null;
}

const DEFAULT_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Process groups started by execTree and not yet finished (so an interrupted run can end them). */
const liveGroups = new Set<number>();

/** Kills every process group execTree started that is still running; returns how many. */
export function killLiveGroups(): number {
  const n = liveGroups.size;
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  liveGroups.clear();
  return n;
}

/**
 * Runs `argv` as leader of a new process group: on timeout the group gets SIGTERM, then SIGKILL after the grace;
 * when the leader ends, anything left in its group is killed, so a backgrounded sleeper leaves nothing running.
 */
export function execTree(argv: readonly string[], opts: ExecTreeOptions): Promise<ExecTreeResult> {
  const [cmd, ...args] = argv;
  if (!cmd) throw new Error('execTree: empty argv');
  const cap = opts.max_output_bytes ?? DEFAULT_OUTPUT_BYTES;
  const grace = opts.kill_grace_ms ?? 1000;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const out = new TailBuffer(cap);
    const err = new TailBuffer(cap);
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const tracker = opts.tracker;
    const [exe, ...rest] = tracker ? tracker.wrapArgv([cmd, ...args]) : [cmd, ...args];
    const fds = (opts.fd_files ?? []).map((f) => openSync(f, 'r'));
    const stdin = opts.input !== undefined ? 'pipe' : 'ignore';
    const child = spawn(exe!, rest, { cwd: opts.cwd, env: tracker ? tracker.env(opts.env) : opts.env, detached: true, stdio: [stdin, 'pipe', 'pipe', ...fds] });
    for (const fd of fds) closeSync(fd);
    // A command that never reads its stdin closes the pipe early; that is not an error of ours.
    child.stdin?.on('error', () => undefined).end(opts.input);
    // Both are pipes (stdio above); the extra descriptors make the type lose that.
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    const pgid = child.pid;
    if (pgid !== undefined) liveGroups.add(pgid);
    tracker?.start(pgid);
    stdout.on('data', (b: Buffer) => out.push(b));
    stderr.on('data', (b: Buffer) => err.push(b));

    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(pgid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), grace);
    }, opts.timeout_ms);

    const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError: string | null) => {
      if (settled) return;
      settled = true;
      const wall_ms = performance.now() - t0;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      let stragglers = tracker ? tracker.killAll() : groupSize(pgid);
      signalGroup(pgid, 'SIGKILL');
      if (pgid !== undefined) liveGroups.delete(pgid);
      if (opts.sweep_dir) stragglers += killProcessesIn(opts.sweep_dir);
      const tracking = tracker ? tracker.close() : null;
      const done = () => {
        stdout.destroy();
        stderr.destroy();
        resolve({
          exit_code: code,
          signal,
          timed_out: timedOut,
          wall_ms,
          stdout: out.toString(),
          stderr: err.toString(),
          stragglers_killed: stragglers,
          spawn_error: spawnError,
          tracking,
        });
      };
      // A killed straggler may hold a pipe open: wait for both to close, at most 500 ms.
      const t = setTimeout(done, 500);
      const closed = [stdout, stderr].map((s) => new Promise((r) => (s.closed ? r(null) : s.once('close', r))));
      void Promise.all(closed).then(() => {
        clearTimeout(t);
        done();
      });
    };
    child.once('error', (e) => finish(null, null, e.message));
    child.once('exit', (code, signal) => finish(code, signal, null));
  });
}

type SandboxedOptions = Pick<ExecTreeOptions, 'env' | 'timeout_ms' | 'kill_grace_ms' | 'max_output_bytes'> & { memory_limit_bytes: number };

/** `sh -c line` in `dir` under `sandbox`; every process it starts is tracked (all stopped past `memory_limit_bytes`), swept from `dir`. */
export function execSandboxed(sandbox: Sandbox, line: string, dir: string, wrap: WrapOptions, opts: SandboxedOptions): Promise<ExecTreeResult> {
  const { memory_limit_bytes, ...rest } = opts;
  const w = sandbox.wrap(['sh', '-c', line], dir, wrap);
  return execTree(w.argv, { ...rest, cwd: dir, sweep_dir: dir, fd_files: w.fd_files, tracker: new ProcessTracker(memory_limit_bytes, dir) });
}

/** Signals a whole process group; a group that is already gone is fine. */
function signalGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  // ESRCH: nothing left in the group.
  if (pgid !== undefined) attempt(() => process.kill(-pgid, signal), false);
}

/** How many processes are in the group (from /proc on Linux; elsewhere 1 when any is, else 0). */
function groupSize(pgid: number | undefined): number {
  if (pgid === undefined || !attempt(() => process.kill(-pgid, 0), false)) return 0;
  const procs = listProcs();
  return procs === null ? 1 : procs.filter((p) => p.pgrp === pgid && !p.exited).length;
}

/** Kills every process whose cwd is inside `dir` (a child that left its group with setsid); returns the count. */
function killProcessesIn(dir: string): number {
  let n = 0;
  for (const p of listProcs() ?? []) {
    if (p.pid === process.pid || p.exited || !cwdInside(p.pid, dir)) continue;
    // One gone already is not counted.
    if (attempt(() => process.kill(p.pid, 'SIGKILL'), false)) n++;
  }
  return n;
}

/** Keeps the last `cap` bytes written to it. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly cap: number) {}
  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size > this.cap && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }
  toString(): string {
    const all = Buffer.concat(this.chunks);
    return (all.length > this.cap ? all.subarray(all.length - this.cap) : all).toString('utf8');
  }
}
