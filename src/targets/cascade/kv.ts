import type { Stage, StageResult } from '../../core/types.js';
import { normalizeKey } from './normalize.js';

/** Stage 2: exact-key lookups of well-known constants. Keys compare after `normalizeKey`. */
export class KvStage implements Stage {
  readonly id = 'kv';
  private readonly map = new Map<string, string>();
  private readonly energyUj: number;

  /** `energy_uj`: modelled energy of one lookup, µJ. */
  constructor(entries: Record<string, string>, opts: { energy_uj?: number } = {}) {
    for (const [k, v] of Object.entries(entries)) this.map.set(normalizeKey(k), v);
    this.energyUj = opts.energy_uj ?? 5_000;
  }

  tryAnswer(prompt: string): StageResult {
    return { text: this.map.get(normalizeKey(prompt)) ?? null, energy_uj: this.energyUj };
  }

  get size(): number {
    return this.map.size;
  }

  describe(): Record<string, unknown> {
    return { stage: 'kv', entries: this.map.size, energy_uj: this.energyUj };
  }
}
