import type { Target } from '../../core/types.js';
import { CacheStage, type CacheStageOptions } from './cache.js';
import { Cascade } from './cascade.js';
import { createEchoTarget } from './echo.js';
import { REFERENCE_KV, REFERENCE_TRIPLES } from './fixtures.js';
import { GraphStage } from './graph.js';
import { KvStage } from './kv.js';
import { NeuralStage } from './neural.js';

/** Modelled energy per stage attempt, µJ: constants of the reference cost model, not measurements. */
export const REFERENCE_STAGE_ENERGY_UJ = { cache: 1_000, kv: 5_000, graph: 50_000 } as const;

/** The cascade `joulebench run` uses by default: cache → KV → graph → neural (default: echo, 50 J) on fixture data. */
export function createReferenceCascade(opts: { neural?: Target; cache?: CacheStageOptions } = {}): Cascade {
  const neural = opts.neural ?? createEchoTarget();
  return new Cascade(`cascade:reference+${neural.id}`, [
    new CacheStage({ capacity: 1024, energy_uj: REFERENCE_STAGE_ENERGY_UJ.cache, ...opts.cache }),
    new KvStage(REFERENCE_KV, { energy_uj: REFERENCE_STAGE_ENERGY_UJ.kv }),
    new GraphStage(REFERENCE_TRIPLES, { energy_uj: REFERENCE_STAGE_ENERGY_UJ.graph }),
    new NeuralStage(neural),
  ], opts.neural === undefined);
}
