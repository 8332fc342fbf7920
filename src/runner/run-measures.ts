import type { ReportContext } from '../core/aggregate.js';
import type { IdleCalibration, SuiteWindow } from '../core/energy.js';
import { JoulebenchError } from '../core/errors.js';

/**
 * The `run_measures` line a finished run writes before `end`: what its report took from beyond the
 * cases (the idle calibration, the whole-suite window when it was the total, the scored passes' wall
 * time), so that `report FILE` rebuilds the run's own report, measured energy and throughput included.
 * A file written before this line existed has none, and its rebuilt report lacks those figures.
 */
export type RunMeasures = {
  record: 'run_measures';
  idle: { status: IdleCalibration['status']; watts: number | null };
  suite: { joules: number | null; source: string; window_ms: number; below_floor: boolean } | null;
  scored_wall_ms: number | null;
};

export function runMeasuresLine(idle: Pick<IdleCalibration, 'status' | 'watts'>, suite: SuiteWindow | null, scored_wall_ms: number | null): RunMeasures {
  return {
    record: 'run_measures',
    idle: { status: idle.status, watts: idle.watts },
    suite: suite ? { joules: suite.joules, source: suite.source, window_ms: suite.window_ms, below_floor: suite.below_floor } : null,
    scored_wall_ms,
  };
}

const IDLE_STATUSES: readonly unknown[] = ['measured', 'marginal', 'skipped', 'unusable'];

/** The report context a `run_measures` line gives back, or an error naming the file and the key. */
export function reportContextFromMeasures(line: Record<string, unknown>, path: string): Pick<ReportContext, 'energy' | 'scored_wall_ms'> {
  const bad = (key: string, what: string): never => {
    throw new JoulebenchError('E_RESULTS', `${path}: the run_measures line's ${key} ${what}`);
  };
  const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const idle = line.idle as Record<string, unknown> | null | undefined;
  if (typeof idle !== 'object' || idle === null) bad('idle', 'is not an object');
  if (!IDLE_STATUSES.includes(idle!.status)) bad('idle.status', `is not one of ${IDLE_STATUSES.join(', ')}`);
  if (idle!.watts !== null && !finite(idle!.watts)) bad('idle.watts', 'is neither null nor a finite number');
  const suite = line.suite as Record<string, unknown> | null | undefined;
  if (suite !== null) {
    if (typeof suite !== 'object') bad('suite', 'is neither null nor an object');
    if (suite!.joules !== null && !finite(suite!.joules)) bad('suite.joules', 'is neither null nor a finite number');
    if (typeof suite!.source !== 'string') bad('suite.source', 'is not a string');
    if (!finite(suite!.window_ms)) bad('suite.window_ms', 'is not a finite number');
    if (typeof suite!.below_floor !== 'boolean') bad('suite.below_floor', 'is not true or false');
  }
  if (line.scored_wall_ms !== null && !finite(line.scored_wall_ms)) bad('scored_wall_ms', 'is neither null nor a finite number');
  const m = line as unknown as RunMeasures;
  return {
    energy: { idle: m.idle, suite: m.suite as NonNullable<ReportContext['energy']>['suite'] },
    scored_wall_ms: m.scored_wall_ms,
  };
}
