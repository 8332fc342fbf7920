import type { InferArm, MachinePeak } from './types.js';

/**
 * Which peak a prefill rate is checked against. A configured peak (`--peak-flops`) always applies; the
 * default CPU ceiling applies only to an arm with a CPU-only receipt (`size_vram` 0), because a model on
 * a GPU can legitimately exceed a CPU's peak. `null`: no check, and the reason says why. Pure.
 */
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
