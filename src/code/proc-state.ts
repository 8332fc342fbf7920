import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** One process as /proc/PID/stat gives it. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Exited and waiting only to be reaped: killing it kills nothing. */
  zombie: boolean;
  /** Start time in clock ticks since boot (field 22 of /proc/PID/stat). */
  start: string;
}

/** A process's /proc/PID/stat, or `null` when it is gone (fields read after the last ")": comm may hold any). */
export function processStat(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(f[1]), pgrp: Number(f[2]), zombie: f[0] === 'Z', start: f[19] ?? '' };
  } catch {
    return null;
  }
}

/** Every process in /proc; `null` when /proc cannot be read (not Linux). */
export function listProcs(): ProcInfo[] | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  return entries.filter((e) => /^\d+$/.test(e)).flatMap((e) => processStat(Number(e)) ?? []);
}

/** True for a process that has exited and waits only to be reaped: killing it kills nothing. */
export function isZombie(pid: number): boolean {
  return processStat(pid)?.zombie === true;
}

/** True when the process's working directory is `dir` or inside it. */
export function cwdInside(pid: number, dir: string): boolean {
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd === dir || cwd.startsWith(dir + '/');
  } catch {
    return false;
  }
}
