import { readFileSync } from 'node:fs';

/** CPU time used so far, ms: this process, and its children that have exited and been waited for. */
export interface CpuTimes {
  self_ms: number;
  /** `null` where the platform does not say (no `/proc`). Resolution 10 ms (USER_HZ ticks). */
  children_ms: number | null;
}

/** Linux's `/proc` tick unit, fixed in the ABI (USER_HZ), whatever the kernel's own HZ. */
const USER_HZ = 100;

/** Reads CPU times now; the children's part from `/proc/self/stat` (Node exposes only `RUSAGE_SELF`). */
export function readCpuTimes(statPath = '/proc/self/stat'): CpuTimes {
  const u = process.cpuUsage();
  let stat: string | null = null;
  try {
    stat = readFileSync(statPath, 'utf8');
  } catch {
    // no /proc: the children's time is unknown
  }
  return { self_ms: (u.user + u.system) / 1000, children_ms: stat === null ? null : parseChildrenCpuMs(stat) };
}

/** Parses `cutime + cstime` out of a stat line (the command name may hold spaces and parentheses). */
export function parseChildrenCpuMs(stat: string): number | null {
  const close = stat.lastIndexOf(')');
  if (close < 0) return null;
  const fields = stat.slice(close + 2).trim().split(/\s+/);
  // fields[0] is field 3 (state), so field n sits at n - 3.
  const cutime = Number(fields[13]);
  const cstime = Number(fields[14]);
  if (!Number.isFinite(cutime) || !Number.isFinite(cstime)) return null;
  return ((cutime + cstime) * 1000) / USER_HZ;
}
