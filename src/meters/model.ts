import type { Meter, MeterWindow } from './meter.js';

/** The `model` meter: energy is the target's own cost model (`Answer.energy`); it opens no window. */
export function createModelMeter(): Meter {
  const window: MeterWindow = {
    stop: async () => ({ joules: null, source: 'model', by_domain: {}, window_ms: 0, below_floor: false }),
  };
  return {
    id: 'model',
    source: 'model',
    floor_ms: 0,
    usesTargetEnergy: true,
    marginal: true,
    probe: async () => ({ available: true, detail: 'energy reported by the target itself' }),
    start: async () => window,
    describe: () => ({ meter: 'model', note: 'energy is the target-reported cost model, not a measurement' }),
  };
}
