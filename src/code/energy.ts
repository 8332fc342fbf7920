import type { IdleCalibration } from '../core/energy.js';
import { JoulebenchError } from '../core/errors.js';
import type { EnergySource } from '../core/types.js';
import type { Meter, MeterProbe, MeterWindow } from '../meters/meter.js';
import { calibrateIdle } from '../meters/idle.js';
import { createMeter, METERS, type MeterOptions } from '../meters/registry.js';

/** Sources that are not a measurement of the machine: a solver gets `null` joules rather than these by default. */
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
interface ChosenMeter {
  meter: Meter;
  probe: MeterProbe;
  tried: { name: string; result: string }[];
}

/**
 * `auto`: the hardware counters that read here, else the `none` meter (joules `null`, never an estimate
 * in disguise: the estimate meter reads this process's CPU time, blind to a solver's processes, so only
 * by name). `model` is refused: a solver reports no energy of its own.
 */
export async function chooseCodeMeter(name = 'auto', opts: MeterOptions = {}): Promise<ChosenMeter> {
  if (name === 'none') {
    const meter = createNullMeter('metering turned off with --meter none');
    return { meter, probe: await meter.probe(), tried: [] };
  }
  if (!Object.hasOwn(METERS, name)) {
    throw new JoulebenchError('E_USAGE', `--meter: unknown meter "${name}" (known: ${[...Object.keys(METERS), 'none'].join(', ')})`);
  }
  const meter = await createMeter(name, name === 'auto' ? { ...opts, auto_fallback: 'estimate' } : opts);
  if (meter.usesTargetEnergy || meter.source === 'model') {
    await meter.close?.();
    throw new JoulebenchError('E_USAGE', `--meter ${name}: solvers report no energy of their own; use a meter that measures (auto, rapl, nvml, composite)`);
  }
  const probe = await meter.probe();
  if (name === 'auto') {
    // auto settles on its probe; only a hardware counter is taken.
    if (probe.available && !NOT_MEASURED.has(meter.source)) return { meter, probe, tried: [{ name, result: `chosen: ${meter.id}` }] };
    await meter.close?.();
    // The auto meter's detail ends "using the estimate"; code uses none, so only the reason is kept.
    const why = probe.available ? String((meter.describe() as { no_hardware?: unknown }).no_hardware ?? `auto would fall back to ${meter.source}`) : probe.reason;
    const none = createNullMeter(`no hardware energy counter reads here (${why})`);
    return { meter: none, probe: await none.probe(), tried: [{ name, result: `no hardware counter: ${why}` }] };
  }
  if (!probe.available) {
    await meter.close?.();
    throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  }
  return { meter, probe, tried: [{ name, result: 'chosen with --meter' }] };
}

/** Idle power before a coding run, by the meters' own calibration; `skipped` at once for the `none` meter. */
export async function calibrateCodeIdle(meter: Meter, idle_ms: number): Promise<IdleCalibration> {
  if (meter.id === 'none') {
    return { status: 'skipped', watts: null, by_domain_watts: {}, window_ms: null, source: 'none', reason: 'nothing is measured (meter none)' };
  }
  return calibrateIdle(meter, idle_ms);
}
