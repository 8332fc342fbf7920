import { setTimeout as sleep } from 'node:timers/promises';
import type { IdleCalibration } from '../core/energy.js';
import type { Meter } from './meter.js';

/** Default idle window, ms: long enough for every counter's floor (NVML's is ~100 ms), short enough to be cheap. */
export const DEFAULT_IDLE_MS = 1000;

/** Measures idle power over `idle_ms` with nothing running; marginal meters are not calibrated, 0 skips it. */
export async function calibrateIdle(
  meter: Meter,
  idle_ms: number,
  wait: (ms: number) => Promise<unknown> = (ms) => sleep(ms),
): Promise<IdleCalibration> {
  const base = { watts: null, by_domain_watts: {}, window_ms: null, source: meter.source };
  if (meter.usesTargetEnergy || meter.marginal) {
    return { ...base, status: 'marginal', reason: `${meter.id} readings are a model or coefficient of activity: no idle to subtract` };
  }
  if (idle_ms <= 0) return { ...base, status: 'skipped', reason: 'idle calibration skipped (--no-idle): net energy is unknown' };
  const window = await meter.start();
  await wait(idle_ms);
  const r = await window.stop();
  const seconds = r.window_ms / 1000;
  if (r.joules === null || r.below_floor || !(seconds > 0)) {
    return {
      ...base,
      window_ms: r.window_ms,
      source: r.source,
      status: 'unusable',
      reason: r.joules === null ? 'the idle window read nothing' : `the idle window (${r.window_ms} ms) is below the meter's floor`,
    };
  }
  const by_domain_watts: Record<string, number | null> = {};
  for (const [d, v] of Object.entries(r.by_domain)) by_domain_watts[d] = v.joules === null ? null : v.joules / seconds;
  return { status: 'measured', watts: r.joules / seconds, by_domain_watts, window_ms: r.window_ms, source: r.source };
}
