import { cwdInside, hasExited, listProcs } from './proc-state.js';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { attempt } from './attempt.js';

/**
 * Finds every process a solver or test run started, so all are gone before grading; stops them past a memory limit.
 * Three nets, each catching what the others miss: a cgroup v2 folder joined before exec; the process tree walked
 * every poll (a double fork escapes it); an inherited environment marker (a cleared environment escapes it).
 * At the end, also any process whose cwd is inside the workdir.
 */

/** Environment variable each tracked process inherits; its value is unique per command. */
const MARKER_ENV = 'JOULEBENCH_TRACK';

const POLL_MS = 100;
const PAGE_BYTES = 4096;

/** How a command's processes were tracked. */
export type TrackingMethod = 'cgroup' | 'process-tree';

/** What the tracker saw of one command. */
export interface TrackerReport {
  method: TrackingMethod;
  /** The memory limit was passed: every process was killed. Peak bytes seen, else null. */
  memory_exceeded_bytes: number | null;
  /** Peak resident memory summed over the tracked processes, bytes (sampled every poll). */
  peak_rss_bytes: number;
}

let cgroupBase: string | null | undefined;
let cgroupEnabled = true;

/** Turns cgroup tracking off (the process tree and marker remain), e.g. to test that fallback. */
export function setCgroupTracking(enabled: boolean): void {
  cgroupEnabled = enabled;
}

/** A writable cgroup v2 folder under which per-command folders can be made, or `null`. Probed once. */
export function cgroupV2Base(): string | null {
  if (cgroupBase === undefined) {
    // Unreadable (no cgroup v2 here): no mount point, no base.
    const mounts = attempt(() => readFileSync('/proc/self/mountinfo', 'utf8'), '').split('\n');
    const mountPoint = mounts.find((l) => / - cgroup2 /.test(l))?.split(' ')[4];
    const self = attempt(() => readFileSync('/proc/self/cgroup', 'utf8'), '').split('\n').find((l) => l.startsWith('0::'));
    cgroupBase = mountPoint && self !== undefined ? ([join(mountPoint, self.slice(3)), mountPoint].find(canJoin) ?? null) : null;
  }
  return cgroupBase;
}

/** Whether a cgroup can be made under `dir` and joined (a cgroup with controllers on may refuse processes). */
function canJoin(dir: string): boolean {
  const probe = join(dir, `joulebench-probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(probe);
    try {
      execFileSync('sh', ['-c', 'echo $$ > "$0/cgroup.procs"', probe], { stdio: 'ignore', timeout: 5000 });
    } finally {
      rmdirSync(probe);
    }
    return true;
  } catch {
    // not writable or not joinable here; the caller tries the next
    return false;
  }
}

/** Tracks the processes of one command. */
export class ProcessTracker {
  readonly marker = randomBytes(12).toString('hex');
  readonly method: TrackingMethod;
  private readonly cgroup: string | null;
  /** Tracked PIDs with their start time (so a reused PID is never taken for a tracked one). */
  private readonly pids = new Map<number, string>();
  private rootPid: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private peak = 0;
  private exceeded: number | null = null;

  /** Stops everything past `memory_limit_bytes` (null: no limit); also kills processes whose cwd is in `sweep_dir`. */
  constructor(
    private readonly memory_limit_bytes: number | null,
    private readonly sweep_dir: string | null = null,
  ) {
    const base = cgroupEnabled ? cgroupV2Base() : null;
    let dir: string | null = null;
    if (base) {
      dir = join(base, `joulebench-${process.pid}-${this.marker.slice(0, 8)}`);
      try {
        mkdirSync(dir);
        // The kernel enforces the limit itself where the memory controller is delegated here.
        if (memory_limit_bytes !== null && existsSync(join(dir, 'memory.max'))) writeFileSync(join(dir, 'memory.max'), String(memory_limit_bytes));
      } catch {
        dir = null;
      }
    }
    this.cgroup = dir;
    this.method = dir ? 'cgroup' : 'process-tree';
  }

  /** The argv that first moves itself into the cgroup, then execs `argv` (unchanged without a cgroup). */
  wrapArgv(argv: readonly string[]): string[] {
    if (!this.cgroup) return [...argv];
    return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" || exit 125; exec "$@"', this.cgroup, ...argv];
  }

  /** `env` plus the marker. */
  env(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...env, [MARKER_ENV]: this.marker };
  }

  /** Starts polling from the command's PID; past the memory limit, every process is killed (once). */
  start(pid: number | undefined): void {
    this.rootPid = pid;
    const poll = () => {
      const live = this.collect();
      const rss = this.memoryBytes(live);
      if (rss > this.peak) this.peak = rss;
      if (this.memory_limit_bytes !== null && rss > this.memory_limit_bytes && this.exceeded === null) {
        this.exceeded = rss;
        this.killAll();
      }
    };
    this.timer = setInterval(poll, POLL_MS);
    this.timer.unref();
  }

  /** Kills every tracked process, repeating until none is left (or 50 rounds); returns how many were killed. */
  killAll(): number {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const killed = new Set<number>();
    for (let round = 0; round < 50; round++) {
      const live = [...this.collect(true)].filter((p) => p !== process.pid);
      if (live.length === 0) break;
      // Read before any signal: an exited process waiting to be reaped (bwrap's, say) is no straggler,
      // while one killed just below becomes one, and must still count.
      const running = live.filter((p) => !hasExited(p));
      const cgroupKill = this.cgroup ? join(this.cgroup, 'cgroup.kill') : null;
      // Where cgroup.kill fails (or is missing), signalling each one still does it; one already gone is fine.
      if (cgroupKill && existsSync(cgroupKill)) attempt(() => writeFileSync(cgroupKill, '1'), null);
      for (const p of live) attempt(() => process.kill(p, 'SIGKILL'), false);
      for (const p of running) killed.add(p);
      waitMs(10);
    }
    return killed.size;
  }

  /** Removes the cgroup folder and reports. Call after killAll. */
  close(): TrackerReport {
    if (this.timer) clearInterval(this.timer);
    if (this.cgroup) {
      for (let i = 0; i < 50; i++) {
        try {
          rmdirSync(this.cgroup);
          break;
        } catch {
          waitMs(10);
        }
      }
    }
    return { method: this.method, memory_exceeded_bytes: this.exceeded, peak_rss_bytes: this.peak };
  }

  /** The live tracked set: cgroup members, descendants of known PIDs, and (with `thorough`) marker and cwd holders. */
  private collect(thorough = false): Set<number> {
    const live = new Set<number>();
    const cgroup = this.cgroup;
    // A cgroup already removed has no members.
    const members = cgroup ? attempt(() => readFileSync(join(cgroup, 'cgroup.procs'), 'utf8'), '') : '';
    for (const l of members.split('\n')) if (l) live.add(Number(l));
    const procs = listProcs() ?? [];
    if (this.rootPid !== undefined && !this.pids.has(this.rootPid)) {
      const root = procs.find((p) => p.pid === this.rootPid);
      if (root) this.pids.set(root.pid, root.start);
    }
    // Descendants: repeat until no new child joins (children may be listed before their parents).
    const startOf = new Map(procs.map((p) => [p.pid, p.start]));
    const tracked = (pid: number) => this.pids.has(pid) && this.pids.get(pid) === startOf.get(pid);
    let grew = true;
    while (grew) {
      grew = false;
      for (const p of procs) {
        if (!tracked(p.pid) && tracked(p.ppid)) {
          this.pids.set(p.pid, p.start);
          grew = true;
        }
      }
    }
    for (const p of procs) if (this.pids.get(p.pid) === p.start) live.add(p.pid);
    if (thorough) {
      for (const p of procs) {
        if (live.has(p.pid) || p.pid === process.pid) continue;
        if (hasMarker(p.pid, this.marker) || (this.sweep_dir !== null && cwdInside(p.pid, this.sweep_dir))) {
          live.add(p.pid);
          this.pids.set(p.pid, p.start);
        }
      }
    }
    for (const p of procs) if (p.exited) live.delete(p.pid);
    return live;
  }

  private memoryBytes(live: Set<number>): number {
    const cgroup = this.cgroup;
    const current = cgroup ? attempt(() => Number(readFileSync(join(cgroup, 'memory.current'), 'utf8')), null) : null;
    if (current !== null) return current;
    // No memory controller here: sum the processes (one gone counts 0).
    let total = 0;
    for (const p of live) total += attempt(() => Number(readFileSync(`/proc/${p}/statm`, 'utf8').split(' ')[1] ?? 0) * PAGE_BYTES, 0);
    return total;
  }
}

function hasMarker(pid: number, marker: string): boolean {
  return attempt(() => readFileSync(`/proc/${pid}/environ`).includes(`${MARKER_ENV}=${marker}\0`), false);
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function waitMs(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}
