import type { PowerTraceSummary } from '../core/energy.js';
import { JoulebenchError } from '../core/errors.js';
import { isFiniteNumber } from './case-check.js';

/** The results line a traced run writes when its trace ends, so that `report FILE` gives `power_trace` back. */
export function powerTraceLine(power_trace: PowerTraceSummary): { record: 'power_trace'; power_trace: PowerTraceSummary } {
  return { record: 'power_trace', power_trace };
}

const PHASES: readonly unknown[] = ['idle', 'warmup', 'scored', 'steady'];

/**
 * The trace a results file's report carries, given its non-case lines in file order (`traced` is the
 * result so far): a `power_trace` line sets it, checked; a `resume` line clears it, since the report is the
 * last process's and its trace covers only what that process ran. Bad input: E_RESULTS naming file and key.
 */
export function tracedBy(line: Record<string, unknown>, traced: PowerTraceSummary | null, path: string): PowerTraceSummary | null {
  if (line.record === 'resume') return null;
  if (line.record !== 'power_trace') return traced;
  const bad = (key: string, what: string): never => {
    throw new JoulebenchError('E_RESULTS', `${path}: the power_trace line's ${key} ${what}`);
  };
  const t = line.power_trace as Record<string, unknown> | null;
  if (typeof t !== 'object' || t === null || Array.isArray(t)) return bad('power_trace', 'is not an object');
  if (!isFiniteNumber(t.interval_ms) || t.interval_ms <= 0) bad('power_trace.interval_ms', 'is not a number above 0');
  if (!Array.isArray(t.domains) || !t.domains.every((d) => typeof d === 'string')) bad('power_trace.domains', 'is not a list of strings');
  if (!Array.isArray(t.rows)) return bad('power_trace.rows', 'is not a list');
  const width = 3 + (t.domains as string[]).length;
  t.rows.forEach((row: unknown, i) => {
    const r = row as unknown[];
    const ok =
      Array.isArray(r) && r.length === width && typeof r[0] === 'string' && PHASES.includes(r[1]) && isFiniteNumber(r[2]) && r[2] >= 0 &&
      r.slice(3).every((w) => w === null || isFiniteNumber(w));
    if (!ok) bad(`power_trace.rows[${i}]`, `is not [t_utc, phase (${PHASES.join(', ')}), dt_ms, watts or null per domain]`);
  });
  return t as unknown as PowerTraceSummary;
}
