import type { EnergySource } from '../core/types.js';
import { createCompositeMeter } from './composite.js';
import type { Meter, MeterProbe, MeterWindow } from './meter.js';
import { createModelMeter } from './model.js';

/**
 * What `auto` does when no hardware counter reads: `model` (for `run`): energy is what the target
 * reports, `null` where it reports none, never an estimate of joulebench's own process; `estimate`
 * (for `meter -- CMD`, where there is no target and the estimate meters the command's own CPU).
 */
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
 * The default meter: hardware counters where they read (RAPL and NVML together, each domain
 * labelled), otherwise the target's own energy (`model`) or, for a bare command, the estimate. Its
 * `id` names what it chose, e.g. `auto(rapl+nvml)` or `auto(model)`, so the report says which; the
 * receipt says why.
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
      if (!p.available) return p;
      if (!fallback) return p;
      const why = Object.entries(tried).map(([id, t]) => `${id}: ${t.available ? 'ok' : t.reason}`).join('; ');
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
        tried: { ...tried },
        ...(chosen ? { chosen: chosen.describe() } : {}),
      };
    },
    async close() {
      await chosen?.close?.();
    },
  };
}
