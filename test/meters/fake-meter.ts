import type { EnergyReading, Meter } from '../../src/meters/meter.js';

/** A meter that returns scripted readings in order (for runner and idle tests). */
export function scriptedMeter(
  readings: Partial<EnergyReading>[],
  opts: { id?: string; floor_ms?: number; marginal?: boolean; available?: boolean } = {},
): Meter & { starts: number } {
  let i = 0;
  const m = {
    id: opts.id ?? 'scripted',
    source: 'rapl' as const,
    floor_ms: opts.floor_ms ?? 1,
    marginal: opts.marginal ?? false,
    starts: 0,
    probe: async () => (opts.available === false ? { available: false as const, reason: 'scripted meter told to be unavailable' } : { available: true as const }),
    async start() {
      m.starts++;
      const r = readings[i++];
      if (!r) throw new Error(`scripted meter: no reading #${i}`);
      return {
        stop: async (): Promise<EnergyReading> => ({
          joules: r.joules === undefined ? 1 : r.joules,
          source: r.source ?? 'rapl',
          by_domain: r.by_domain ?? { 'package-0': { joules: r.joules === undefined ? 1 : r.joules, source: r.source ?? 'rapl' } },
          window_ms: r.window_ms ?? 10,
          below_floor: r.below_floor ?? false,
          ...(r.warnings ? { warnings: r.warnings } : {}),
        }),
      };
    },
    describe: () => ({ meter: opts.id ?? 'scripted' }),
  };
  return m;
}
