import { readFileSync } from 'node:fs';

/**
 * A process's state letter from /proc/PID/stat (`R`, `S`, `Z`, …), or `null` when it is gone or /proc
 * is not there. comm may hold spaces and parentheses, so the fields are read after the last ")".
 */
export function processStat(pid: number): { state: string; ppid: number; pgrp: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '?', ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return null;
  }
}

/** True for a process that has exited and waits only to be reaped: killing it kills nothing. */
export function isZombie(pid: number): boolean {
  return processStat(pid)?.state === 'Z';
}
