import type { ReportContext } from '../core/aggregate.js';
import type { IdleCalibration, SuiteWindow, WindowValidity } from '../core/energy.js';
import { JoulebenchError } from '../core/errors.js';
import { isFiniteNumber } from './case-check.js';

/**
 * The `run_measures` line a finished run writes before `end`: what its report took from beyond the cases
 * (idle calibration, suite window, scored wall time), so that `report FILE` rebuilds the run's own report.
 */
export type RunMeasures = {
  record: 'run_measures';
  idle: { status: IdleCalibration['status']; watts: number | null };
  suite: { joules: number | null; source: string; window_ms: number; below_floor: boolean; validity?: WindowValidity; by_domain?: SuiteWindow['by_domain'] } | null;
  scored_wall_ms: number | null;
  /** `--pue`, when given (the report's facility layer). */
  pue?: number;
};

export function runMeasuresLine(idle: Pick<IdleCalibration, 'status' | 'watts'>, suite: SuiteWindow | null, scored_wall_ms: number | null, pue?: number): RunMeasures {
  return {
    record: 'run_measures',
    idle: { status: idle.status, watts: idle.watts },
    suite: suite
      ? { joules: suite.joules, source: suite.source, window_ms: suite.window_ms, below_floor: suite.below_floor, ...(suite.validity ? { validity: suite.validity } : {}), by_domain: suite.by_domain }
      : null,
    scored_wall_ms,
    ...(pue !== undefined ? { pue } : {}),
  };
}

/**
 * One arm's `run_measures` from the lines of the workers that ran its cases. Several: the suite total is
 * the sum of their windows when all are one source above its floor (else null); idle and wall time are unknown.
 */
export function combineRunMeasures(lines: readonly RunMeasures[]): RunMeasures | null {
  if (lines.length === 0) return null;
  if (lines.length === 1) return lines[0]!;
  const suites = lines.map((l) => l.suite);
  const summable = suites.every((x) => x !== null && x.joules !== null && !x.below_floor && x.validity?.valid !== false && x.source === suites[0]!.source);
  return {
    record: 'run_measures',
    idle: { status: 'unusable', watts: null },
    suite: summable
      ? {
          joules: suites.reduce((t, x) => t + x!.joules!, 0),
          source: suites[0]!.source,
          window_ms: suites.reduce((t, x) => t + x!.window_ms, 0),
          below_floor: false,
        }
      : null,
    scored_wall_ms: null,
  };
}

const IDLE_STATUSES: readonly unknown[] = ['measured', 'marginal', 'skipped', 'unusable'];

/** Says what is wrong with a key of a line: throws. */
export type Refuse = (key: string, what: string) => never;

/** A meter reading as a results line keeps it (`{joules, source, window_ms, below_floor}`), or `bad`. */
export function checkWindowReading(v: unknown, key: string, bad: Refuse): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad(key, 'is not an object');
  const r = v as Record<string, unknown>;
  if (r.joules !== null && !isFiniteNumber(r.joules)) bad(`${key}.joules`, 'is neither null nor a finite number');
  if (typeof r.source !== 'string') bad(`${key}.source`, 'is not a string');
  if (!isFiniteNumber(r.window_ms)) bad(`${key}.window_ms`, 'is not a finite number');
  if (typeof r.below_floor !== 'boolean') bad(`${key}.below_floor`, 'is not true or false');
  if (r.validity !== undefined) {
    const v = r.validity as Record<string, unknown> | null;
    if (typeof v !== 'object' || v === null || typeof v.valid !== 'boolean' || !Array.isArray(v.reasons)) bad(`${key}.validity`, 'is not a {valid, reasons, …} object');
  }
}

/** An idle calibration as a results line keeps it (`{status, watts}`), or `bad`. */
export function checkIdle(v: unknown, bad: Refuse): void {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('idle', 'is not an object');
  const idle = v as Record<string, unknown>;
  if (!IDLE_STATUSES.includes(idle.status)) bad('idle.status', `is not one of ${IDLE_STATUSES.join(', ')}`);
  if (idle.watts !== null && !isFiniteNumber(idle.watts)) bad('idle.watts', 'is neither null nor a finite number');
}

/** The report context a `run_measures` line gives back, or an error naming the file and the key. */
export function reportContextFromMeasures(line: Record<string, unknown>, path: string): Pick<ReportContext, 'energy' | 'scored_wall_ms' | 'pue'> {
  const bad: Refuse = (key, what) => {
    throw new JoulebenchError('E_RESULTS', `${path}: the run_measures line's ${key} ${what}`);
  };
  checkIdle(line.idle, bad);
  if (line.suite !== null) checkWindowReading(line.suite, 'suite', bad);
  if (line.scored_wall_ms !== null && !isFiniteNumber(line.scored_wall_ms)) bad('scored_wall_ms', 'is neither null nor a finite number');
  if (line.pue !== undefined && !(isFiniteNumber(line.pue) && line.pue >= 1)) bad('pue', 'is not a number ≥ 1');
  const suite = line.suite as Record<string, unknown> | null;
  if (suite?.by_domain !== undefined && (typeof suite.by_domain !== 'object' || suite.by_domain === null)) bad('suite.by_domain', 'is not an object');
  const m = line as unknown as RunMeasures;
  return {
    energy: { idle: m.idle, suite: m.suite as NonNullable<ReportContext['energy']>['suite'] },
    scored_wall_ms: m.scored_wall_ms,
    ...(m.pue !== undefined ? { pue: m.pue } : {}),
  };
}
