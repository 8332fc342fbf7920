import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { attempt } from './attempt.js';

/** One process as /proc/PID/stat gives it. */
interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Exited or on its way out (a zombie, or PF_EXITING set) with no thread left running: no straggler. */
  exited: boolean;
  /** Start time in clock ticks since boot (field 22 of /proc/PID/stat). */
  start: string;
}

/** The kernel's "this task is exiting" flag (include/linux/sched.h), set at the start of do_exit. */
const PF_EXITING = 0x4;

/** A process's /proc/PID/stat, or `null` when it is gone. */
function processStat(pid: number): ProcInfo | null {
  return attempt(() => parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8')), null);
}

/**
 * One /proc/PID/stat line, fields read after the last ")" (comm may hold any). A process past do_exit's start counts
 * as exited (bwrap's outer process can end while its PID-namespace init is still being torn down), unless another
 * of its threads runs on: a main thread that exited shows "Z" while the process lives.
 */
export function parseProcStat(pid: number, stat: string): ProcInfo {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ending = f[0] === 'Z' || f[0] === 'X' || (Number(f[6]) & PF_EXITING) !== 0;
  const exited = ending && Number(f[17]) <= 1;
  return { pid, ppid: Number(f[1]), pgrp: Number(f[2]), exited, start: f[19] ?? '' };
}

/** Every process in /proc; `null` when /proc cannot be read (not Linux). */
export function listProcs(): ProcInfo[] | null {
  const entries = attempt(() => readdirSync('/proc'), null);
  return entries?.filter((e) => /^\d+$/.test(e)).flatMap((e) => processStat(Number(e)) ?? []) ?? null;
}

/** True for a process that has exited or is exiting: killing it kills nothing. */
export function hasExited(pid: number): boolean {
  return processStat(pid)?.exited === true;
}

/** True when the process's working directory is `dir` or inside it. */
export function cwdInside(pid: number, dir: string): boolean {
  const cwd = attempt(() => readlinkSync(`/proc/${pid}/cwd`), null);
  return cwd !== null && (cwd === dir || cwd.startsWith(dir + '/'));
}
