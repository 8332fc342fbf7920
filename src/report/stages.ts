import type { BenchReport } from '../core/aggregate.js';

/** Whether a report has stages to show: a cascade, or any case resolved at a stage other than `neural`. */
export function hasStages(r: Pick<BenchReport, 'target' | 'stage_distribution'>): boolean {
  if (typeof r.target === 'string' && r.target.startsWith('cascade')) return true;
  return Object.entries(r.stage_distribution ?? {}).some(([stage, n]) => stage !== 'neural' && n > 0);
}
