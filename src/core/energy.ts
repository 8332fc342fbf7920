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

/** One boundary layer of an energy figure: what it covers, and whether it was measured or modelled. */
export interface EnergyLayer {
  tag: 'measured' | 'modelled';
  joules: number | null;
  /** `null` when nothing was correct, or the window is not valid. */
  joules_per_correct: number | null;
  /** The meter domains summed into it (measured layers). */
  domains?: string[];
}

/**
 * The boundary layers a report covers (Google's per-prompt method): the accelerator (NVML, AMD SMI), the
 * host CPU package and DRAM (RAPL), idle (subtracted or not), and facility overhead (a PUE: modelled).
 * A layer the run did not measure is absent from `covered` and `null`.
 */
export interface EnergyLayers {
  covered: ('accelerator' | 'host' | 'idle' | 'facility')[];
  accelerator: EnergyLayer | null;
  host: EnergyLayer | null;
  /** Idle power × the window: `subtracted` when net energy is gross minus it. */
  idle: (EnergyLayer & { subtracted: boolean }) | null;
  /** (PUE − 1) × the measured gross; `total_joules` is gross × PUE, a modelled figure. */
  facility: (EnergyLayer & { pue: number; total_joules: number | null }) | null;
}

const ACCELERATOR: readonly EnergySource[] = ['nvml', 'amdsmi', 'integrated-power'];

/** The layers of a suite window's reading (its domains by source), its idle calibration and an optional PUE. Pure. */
export function energyLayers(
  window: Pick<SuiteWindow, 'joules' | 'by_domain' | 'window_ms' | 'validity'>,
  idle: Pick<IdleCalibration, 'status' | 'watts'>,
  weightedCorrect: number,
  pue: number | null,
): EnergyLayers {
  const valid = window.validity?.valid !== false;
  const perCorrect = (j: number | null): number | null => (j === null || !valid || weightedCorrect === 0 ? null : j / weightedCorrect);
  const layer = (pick: (s: EnergySource) => boolean): EnergyLayer | null => {
    const entries = Object.entries(window.by_domain).filter(([, v]) => pick(v.source));
    if (entries.length === 0) return null;
    const joules = entries.some(([, v]) => v.joules === null) ? null : entries.reduce((t, [, v]) => t + v.joules!, 0);
    return { tag: 'measured', joules, joules_per_correct: perCorrect(joules), domains: entries.map(([d]) => d) };
  };
  const accelerator = layer((s) => ACCELERATOR.includes(s));
  const host = layer((s) => s === 'rapl');
  const idleJ = idle.status === 'measured' && idle.watts !== null ? (idle.watts * window.window_ms) / 1000 : null;
  const idleLayer = idleJ === null ? null : { tag: 'measured' as const, joules: idleJ, joules_per_correct: perCorrect(idleJ), subtracted: true };
  const facilityJ = pue === null || window.joules === null ? null : (pue - 1) * window.joules;
  const facility =
    pue === null ? null : { tag: 'modelled' as const, joules: facilityJ, joules_per_correct: perCorrect(facilityJ), pue, total_joules: window.joules === null ? null : pue * window.joules };
  const layers = { accelerator, host, idle: idleLayer, facility };
  const covered = (Object.keys(layers) as EnergyLayers['covered']).filter((k) => layers[k] !== null);
  return { covered, ...layers };
}

/**
 * Windows read one after another, as one for {@link energyLayers}: gross and domains summed (a domain some
 * window did not read is unknown), lengths added, and the first invalid verdict if any. Pure.
 */
export function windowsAsOne(
  ws: readonly { joules: number | null; by_domain?: SuiteWindow['by_domain'] | undefined; window_ms: number; validity?: WindowValidity | undefined }[],
): Pick<SuiteWindow, 'joules' | 'by_domain' | 'window_ms' | 'validity'> {
  const by_domain: SuiteWindow['by_domain'] = {};
  for (const k of new Set(ws.flatMap((w) => Object.keys(w.by_domain ?? {})))) {
    const parts = ws.map((w) => w.by_domain?.[k]);
    const known = parts.every((p) => p !== undefined && p.joules !== null);
    by_domain[k] = { joules: known ? parts.reduce((t, p) => t + p!.joules!, 0) : null, source: parts.find((p) => p !== undefined)!.source };
  }
  const invalid = ws.find((w) => w.validity?.valid === false)?.validity;
  const joules = ws.some((w) => w.joules === null) ? null : ws.reduce((t, w) => t + w.joules!, 0);
  return { joules, by_domain, window_ms: ws.reduce((t, w) => t + w.window_ms, 0), ...(invalid ? { validity: invalid } : {}) };
}

/** The layers with every figure passed through `r` (a report's rounding). */
export function roundLayers(l: EnergyLayers, r: (v: number) => number): EnergyLayers {
  const o = (v: number | null): number | null => (v === null ? null : r(v));
  const each = <T extends EnergyLayer | null>(x: T): T => (x === null ? x : { ...x, joules: o(x.joules), joules_per_correct: o(x.joules_per_correct) });
  return { ...l, accelerator: each(l.accelerator), host: each(l.host), idle: each(l.idle), facility: l.facility === null ? null : { ...each(l.facility), total_joules: o(l.facility.total_joules) } };
}

/** What the run was doing during a row of the trace. */
export type TracePhase = 'idle' | 'warmup' | 'scored' | 'steady';

/** The trace as the report embeds it: at most `max_rows` rows, neighbours of one phase merged (energy-weighted). */
export interface PowerTraceSummary {
  interval_ms: number;
  domains: string[];
  /** `[t_utc, phase, dt_ms, watts per domain…]`, domains in `domains` order. */
  rows: [string, TracePhase, number, ...(number | null)[]][];
}
