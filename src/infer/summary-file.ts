import type { LocalPrices } from '../core/usd-parts.js';
import { peakForArm } from './peak.js';
import { summarise, type InferSummary } from './stats.js';
import type { InferArm, MachinePeak } from './types.js';

// Apart from protocol.ts (the Ollama protocol runner: execa, the HTTP client) so that the report
// renderers that summarise an infer run file load none of that.

/** The summary of a file's arms, with each arm's peak chosen by `peakForArm`. Also used by `--report`. */
export function summariseFile(arms: readonly InferArm[], configured: MachinePeak | null, cpuDefault: MachinePeak | null, prices?: LocalPrices, pue?: number): InferSummary {
  const summary = summarise(arms, (a) => peakForArm(a, configured, cpuDefault).peak, prices, pue);
  for (const row of summary.arms) {
    const arm = arms.find((a) => a.id === row.id);
    const reason = arm ? peakForArm(arm, configured, cpuDefault).reason : null;
    if (row.stats && reason) row.stats.flags.push(reason);
  }
  return summary;
}
