import type { EnergySource } from './types.js';

/**
 * How idle power was handled for a run:
 * - `measured`: an idle window ran before the suite; net = gross − idle watts × wall.
 * - `marginal`: the source is a cost model or a coefficient of activity; there is no idle to subtract, net = gross.
 * - `skipped`: no idle window (`--no-idle`); net is unknown (`null`).
 * - `unusable`: the idle window read nothing or was below the meter's floor; net is unknown.
 */
export type IdleStatus = 'measured' | 'marginal' | 'skipped' | 'unusable';

/** The idle calibration of a run: power drawn with nothing running, per domain and in total. */
export interface IdleCalibration {
  status: IdleStatus;
  /** Idle power, W; `null` unless `status` is `measured`. */
  watts: number | null;
  by_domain_watts: Record<string, number | null>;
  /** Length of the idle window, ms; `null` when none ran. */
  window_ms: number | null;
  source: EnergySource;
  /** Why the status is not `measured`, for the receipt. */
  reason?: string;
}

/** Whole-suite energy measured as one window, so short cases still get an honest total. */
export interface SuiteWindow {
  joules: number | null;
  source: EnergySource;
  by_domain: Record<string, { joules: number | null; source: EnergySource }>;
  window_ms: number;
  below_floor: boolean;
  /** How far the window's samples can be trusted; absent when the meter keeps no samples. */
  validity?: WindowValidity;
}

/**
 * `gross − idle watts × wall`; equal to gross for marginal sources; `null` when idle is unknown, and
 * `null` when gross is below idle × wall (the signal is under the idle noise: see {@link netBelowIdle}).
 */
export function netJoules(gross_j: number | null, idle: Pick<IdleCalibration, 'status' | 'watts'>, wall_ms: number | null): number | null {
  const net = rawNet(gross_j, idle, wall_ms);
  return net !== null && net < 0 ? null : net;
}

/**
 * True when gross is below idle watts × wall, so net would be negative: the measured energy is
 * within the idle noise and net is reported `null` (the report's `net_below_idle`).
 */
export function netBelowIdle(gross_j: number | null, idle: Pick<IdleCalibration, 'status' | 'watts'>, wall_ms: number | null): boolean {
  const net = rawNet(gross_j, idle, wall_ms);
  return net !== null && net < 0;
}

function rawNet(gross_j: number | null, idle: Pick<IdleCalibration, 'status' | 'watts'>, wall_ms: number | null): number | null {
  if (gross_j === null) return null;
  if (idle.status === 'marginal') return gross_j;
  if (idle.status !== 'measured' || idle.watts === null || wall_ms === null) return null;
  return gross_j - (idle.watts * wall_ms) / 1000;
}

/**
 * Whether an energy window's samples can be trusted (docs/energy-meters.md, "Validity"): which meter and
 * devices read it, how many samples, how much of the window lies between the first and the last, the
 * largest gap between two samples, counter wraps and failed reads. `valid: false` names its reasons.
 */
export interface WindowValidity {
  valid: boolean;
  reasons: string[];
  meter: string;
  devices: string[];
  samples: number;
  /** % of the window between the first and the last good sample; `null` with fewer than two. */
  coverage_pct: number | null;
  max_gap_ms: number | null;
  wraps: number;
  failed_reads: number;
}
