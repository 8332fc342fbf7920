import type { EnergySource } from '../core/types.js';
import { createCompositeMeter } from './composite.js';
import type { Meter, MeterProbe, MeterWindow } from './meter.js';
import { createModelMeter } from './model.js';

/** When no counter reads: `model` (for `run`: the target's energy, else `null`) or `estimate` (for `meter -- CMD`). */
export type AutoFallback = 'model' | 'estimate';

export interface AutoParts {
  /** Hardware meters, tried in order (RAPL, NVML); every one that reads is used. */
  hardware: readonly Meter[];
  /** Used when none reads and `fallback` is `estimate`. */
  estimate: Meter;
  /** See {@link AutoFallback}. */
  fallback: AutoFallback;
  /** Hardware meters the user asked for explicitly (`--rapl-dram`): when one cannot read, auto cannot either. */
  required?: readonly Meter[];
}

/**
 * The default meter: hardware counters where they read (each domain labelled), otherwise the fallback.
 * Its `id` names what it chose (`auto(rapl+nvml)`, `auto(model)`); the receipt says why.
 */
export function createAutoMeter(parts: AutoParts): Meter {
  let chosen: Meter | null = null;
  let tried: Record<string, MeterProbe> = {};
  let fallback = false;

  async function resolve(): Promise<Meter> {
    if (chosen) return chosen;
    tried = {};
    const readable: Meter[] = [];
    for (const m of parts.hardware) {
      const p = await m.probe();
      tried[m.id] = p;
      if (p.available) readable.push(m);
      else await m.close?.();
    }
    if (readable.length > 0) chosen = createCompositeMeter(readable);
    else {
      fallback = true;
      chosen = parts.fallback === 'model' ? createModelMeter() : parts.estimate;
    }
    return chosen;
  }

  const hardwareReason = (): string => Object.entries(tried).map(([id, t]) => `${id}: ${t.available ? 'ok' : t.reason}`).join('; ');
  const label = (): string => (chosen ? `auto(${chosen.id})` : 'auto');

  return {
    get id() {
      return label();
    },
    get source(): EnergySource {
      return chosen?.source ?? 'none';
    },
    get floor_ms() {
      return chosen?.floor_ms ?? 0;
    },
    get usesTargetEnergy() {
      return chosen?.usesTargetEnergy === true;
    },
    get marginal() {
      return chosen?.marginal ?? false;
    },
    async probe(): Promise<MeterProbe> {
      const m = await resolve();
      for (const r of parts.required ?? []) {
        const t = tried[r.id];
        if (t && !t.available) return t;
      }
      const p = await m.probe();
      if (!p.available || !fallback) return p;
      const why = hardwareReason();
      const what = parts.fallback === 'model' ? "the target's own energy (null where it reports none; --meter estimate for an estimate)" : 'the estimate';
      return { available: true, detail: `no hardware counter reads (${why}); using ${what}` };
    },
    async start(): Promise<MeterWindow> {
      return (await resolve()).start();
    },
    describe() {
      return {
        meter: 'auto',
        chose: label(),
        fallback: fallback ? parts.fallback : null,
        // Why no hardware counter was taken, alone: callers that refuse the fallback say this, not "using …".
        ...(fallback ? { no_hardware: hardwareReason() } : {}),
        tried: { ...tried },
        ...(chosen ? { chosen: chosen.describe() } : {}),
      };
    },
    async close() {
      await chosen?.close?.();
    },
  };
}
