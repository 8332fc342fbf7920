import type { Stage, StageResult } from '../../core/types.js';

export interface CacheStageOptions {
  /** Most entries kept; the least recently used is evicted beyond it. Seed 000 §4: 1024. */
  capacity?: number;
  /** Modelled energy of one lookup, µJ. */
  energy_uj?: number;
}

/** The stages whose answers the cache admits, and the longest prompt admitted, characters. */
const ADMIT_FROM = ['neural'];
const MAX_PROMPT_CHARS = 80;

/**
 * Stage 1: an LRU memo of later stages' answers. Only `neural` answers (KV and graph are already cheap)
 * to short prompts (the ones that recur verbatim) are admitted, so the router suite still reaches every stage.
 */
export class CacheStage implements Stage {
  readonly id = 'cache';
  readonly capacity: number;
  private readonly entries = new Map<string, string>();
  private readonly energyUj: number;
  /** Counters for the receipt and tests. */
  hits = 0;
  misses = 0;
  evictions = 0;

  constructor(opts: CacheStageOptions = {}) {
    this.capacity = opts.capacity ?? 1024;
    if (!Number.isInteger(this.capacity) || this.capacity < 1) throw new RangeError('cache capacity must be an integer >= 1');
    this.energyUj = opts.energy_uj ?? 1_000;
  }

  tryAnswer(prompt: string): StageResult {
    const hit = this.replayHit(prompt);
    if (hit === undefined) this.misses++;
    else this.hits++;
    return { text: hit ?? null, energy_uj: this.energyUj };
  }

  /** Called by the cascade after a later stage answered; admits per the policy above. */
  observe(prompt: string, text: string, stageId: string): void {
    if (!ADMIT_FROM.includes(stageId) || prompt.length > MAX_PROMPT_CHARS) return;
    this.entries.delete(prompt);
    this.entries.set(prompt, text);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.evictions++;
    }
  }

  /** The recency effect of a hit, without counting it as a lookup (`--resume` replays recorded hits with it). */
  replayHit(prompt: string): string | undefined {
    const hit = this.entries.get(prompt);
    if (hit === undefined) return undefined;
    // A Map iterates in insertion order, so re-inserting moves the key to the end.
    this.entries.delete(prompt);
    this.entries.set(prompt, hit);
    return hit;
  }

  /** The cached prompts, least recently used first (tests compare a resumed cache with an uninterrupted one). */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  has(prompt: string): boolean {
    return this.entries.has(prompt);
  }

  get size(): number {
    return this.entries.size;
  }

  describe(): Record<string, unknown> {
    return {
      stage: 'cache',
      policy: 'lru',
      capacity: this.capacity,
      energy_uj: this.energyUj,
      admit_from: [...ADMIT_FROM],
      max_prompt_chars: MAX_PROMPT_CHARS,
    };
  }
}
