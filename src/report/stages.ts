import type { BenchReport } from '../core/aggregate.js';

/**
 * Whether a report has stages to show: a cascade (its id says so), or any case resolved at a stage
 * other than `neural`. A plain endpoint resolves everything at `neural`, so a cache/kv/graph table for
 * it would be three rows of zeros that suggest a cascade was tried. Its JSON keeps the seed's
 * `stage_distribution` (everything at `neural`) all the same.
 */
export function hasStages(r: Pick<BenchReport, 'target' | 'stage_distribution'>): boolean {
  if (typeof r.target === 'string' && r.target.startsWith('cascade')) return true;
  return Object.entries(r.stage_distribution ?? {}).some(([stage, n]) => stage !== 'neural' && n > 0);
}
