import type { WindowValidity } from '../core/energy.js';
import type { Energy, EnergySource } from '../core/types.js';

/** Whether a meter can read on this machine, and if not, why and how to fix it. */
export type MeterProbe =
  | { available: true; detail?: string }
  | { available: false; reason: string; fix?: string };

/** One reading over a window. `joules` is `null` when unknown, never 0. */
export interface EnergyReading {
  joules: number | null;
  source: EnergySource;
  by_domain: NonNullable<Energy['by_domain']>;
  window_ms: number;
  /** The window was shorter than the meter's floor: the figure is noise-dominated. */
  below_floor: boolean;
  /** Things a person should know about this figure (a dropped sample, a part that did not read). */
  warnings?: string[];
  /** Whether the window's samples can be trusted (hardware meters; absent for a model or an estimate). */
  validity?: WindowValidity;
}

/** An open measurement window. */
export interface MeterWindow {
  stop(): Promise<EnergyReading>;
}

/** Measures energy over windows (the `model` meter measures nothing: the runner takes the target's energy). */
export interface Meter {
  readonly id: string;
  readonly source: EnergySource;
  /** The shortest window this meter resolves, ms; shorter readings are flagged `below_floor`. */
  readonly floor_ms: number;
  /** True when the runner should take energy from the target's own report instead of windows. */
  readonly usesTargetEnergy?: boolean;
  /** Windows are opened but a target's own energy, when reported, wins (no bundled meter sets it). */
  readonly prefersTargetEnergy?: boolean;
  /** Readings are already marginal (a coefficient, a cost model): no idle calibration, net equals gross. */
  readonly marginal?: boolean;
  probe(): Promise<MeterProbe>;
  start(): Promise<MeterWindow>;
  /** Static facts for the receipt (domains, coefficients); never secrets. */
  describe(): Record<string, unknown>;
  close?(): Promise<void>;
}

/** The first line of an error's message (native libraries and child processes write several). */
export function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0] ?? '';
}
