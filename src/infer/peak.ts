import type { InferArm, MachinePeak } from './types.js';

/** The peak a prefill rate is checked against: `--peak-flops`, else the CPU ceiling for a CPU-only arm only (a GPU may exceed it). */
export function peakForArm(
  arm: Pick<InferArm, 'receipts'>,
  configured: MachinePeak | null,
  cpuDefault: MachinePeak | null,
): { peak: MachinePeak | null; reason: string | null } {
  if (configured) return { peak: configured, reason: null };
  if (arm.receipts.cpu_only_receipt === true && cpuDefault) return { peak: cpuDefault, reason: null };
  if (arm.receipts.cpu_only_receipt === false) {
    return { peak: null, reason: 'plausibility check skipped: the model is (partly) in VRAM (size_vram > 0) and no --peak-flops was given' };
  }
  return { peak: null, reason: 'plausibility check skipped: no CPU-only receipt and no --peak-flops' };
}
