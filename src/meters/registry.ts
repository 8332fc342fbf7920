import { JoulebenchError } from '../core/errors.js';
import type { Meter } from './meter.js';

/** Settings a meter may read (from CLI flags or the environment the CLI passes in). */
export interface MeterOptions {
  [key: string]: unknown;
}

export interface MeterFactory {
  summary: string;
  /** Heavy or native code (NVML) is imported here, so machines that never ask for it never load it. */
  create(opts: MeterOptions): Promise<Meter>;
}

/** Every meter, in one explicit table. */
export const METERS: Record<string, MeterFactory> = {
  model: {
    summary: 'energy the target reports from its own cost model (the cascade stages), labelled model',
    async create() {
      const { createModelMeter } = await import('./model.js');
      return createModelMeter();
    },
  },
};

export async function createMeter(name: string, opts: MeterOptions = {}): Promise<Meter> {
  const factory = METERS[name];
  if (!factory) throw new JoulebenchError('E_USAGE', `--meter: unknown meter "${name}" (known: ${Object.keys(METERS).join(', ')})`);
  return factory.create(opts);
}
