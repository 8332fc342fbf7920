import { setTimeout as sleep } from 'node:timers/promises';
import { JoulebenchError } from '../core/errors.js';
import type { EnergySource } from '../core/types.js';
import type { Meter, MeterProbe, MeterWindow } from '../meters/meter.js';
import { createMeter, METERS } from '../meters/registry.js';

/**
 * Meters tried, in order, when `--meter` is not given. Only those present in the registry are tried,
 * and only one that measures (not `model`, not `estimate`) is taken: a solver reports no energy of its
 * own and an estimate is not a measurement, so without a counter the joules are null, never 0.
 */
export const DEFAULT_METER_ORDER = ['auto', 'rapl', 'nvml'] as const;

const NOT_MEASURED: ReadonlySet<EnergySource> = new Set(['model', 'estimate', 'none']);

/** The meter that measures nothing: every reading is `null` joules, source `none`. */
export function createNullMeter(why = 'no energy counter readable here'): Meter {
  return {
    id: 'none',
    source: 'none',
    floor_ms: 0,
    probe: async () => ({ available: true, detail: why }),
    async start(): Promise<MeterWindow> {
      const t0 = performance.now();
      return { stop: async () => ({ joules: null, source: 'none', by_domain: {}, window_ms: performance.now() - t0, below_floor: false }) };
    },
    describe: () => ({ meter: 'none', note: `joules are null: ${why}` }),
  };
}

/** The meter chosen for a coding run, its probe, and what was tried. */
export interface ChosenMeter {
  meter: Meter;
  probe: MeterProbe;
  tried: { name: string; result: string }[];
}

/** `--meter NAME` insists on that meter; without it, the first measuring meter that reads, else none. */
export async function chooseCodeMeter(name?: string): Promise<ChosenMeter> {
  if (name !== undefined && name !== 'none') {
    const meter = await createMeter(name);
    if (meter.usesTargetEnergy) {
      throw new JoulebenchError('E_USAGE', `--meter ${name}: solvers report no energy of their own; use a meter that measures (${Object.keys(METERS).join(', ')})`);
    }
    const probe = await meter.probe();
    if (!probe.available) {
      throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
    }
    return { meter, probe, tried: [{ name, result: 'chosen with --meter' }] };
  }
  const tried: ChosenMeter['tried'] = [];
  if (name === undefined) {
    for (const candidate of DEFAULT_METER_ORDER) {
      if (!Object.hasOwn(METERS, candidate)) continue;
      let meter: Meter;
      try {
        meter = await createMeter(candidate);
      } catch (e) {
        tried.push({ name: candidate, result: `failed: ${(e as Error).message}` });
        continue;
      }
      const probe = await meter.probe();
      if (!probe.available) {
        tried.push({ name: candidate, result: `unavailable: ${probe.reason}` });
        await meter.close?.();
        continue;
      }
      if (meter.usesTargetEnergy || NOT_MEASURED.has(meter.source)) {
        tried.push({ name: candidate, result: `skipped: source ${meter.source} is not a measurement` });
        await meter.close?.();
        continue;
      }
      tried.push({ name: candidate, result: 'chosen' });
      return { meter, probe, tried };
    }
  }
  const why = name === 'none' ? 'metering turned off with --meter none' : 'no measuring meter could read here';
  const meter = createNullMeter(why);
  return { meter, probe: await meter.probe(), tried };
}

/** Idle power over a quiet window, watts; `null` when the meter reads nothing. */
export interface IdlePower {
  watts: number | null;
  window_ms: number;
  source: EnergySource;
}

/**
 * Measures the machine sitting idle for `ms`, so that net energy (gross − idle watts × wall) isolates
 * what a solver added. A meter that reads nothing gives `watts: null`.
 */
export async function measureIdlePower(meter: Meter, ms: number): Promise<IdlePower> {
  const w = await meter.start();
  await sleep(ms);
  const r = await w.stop();
  const watts = r.joules === null || r.window_ms <= 0 ? null : r.joules / (r.window_ms / 1000);
  return { watts, window_ms: r.window_ms, source: r.source };
}
