import { pickVisible } from '../gpu.js';

/**
 * The AMD SMI indices a ROCm process may use. `ROCR_VISIBLE_DEVICES` is applied first (by the ROCm
 * runtime), then `HIP_VISIBLE_DEVICES` indexes into what ROCR left visible, so `ROCR=2,3 HIP=1`
 * leaves device 3. Entries are decimal indices. UUID entries are not matched (AMD SMI's UUID and
 * ROCr's `GPU-<id>` differ in form), so a UUID ends the list and is reported as ignored.
 */
export function rocmVisibleDevices(
  env: { rocr?: string | undefined; hip?: string | undefined },
  count: number,
): { indices: number[]; ignored: string[] } {
  const all = Array.from({ length: count }, (_, i) => i);
  const byIndex = (from: readonly number[]) => (t: string) => (/^\d+$/.test(t) ? from[Number(t)] : undefined);
  const rocr = pickVisible(env.rocr, all, byIndex(all));
  const hip = pickVisible(env.hip, rocr.indices, byIndex(rocr.indices));
  return { indices: hip.indices, ignored: [...rocr.ignored.map((t) => `ROCR_VISIBLE_DEVICES:${t}`), ...hip.ignored.map((t) => `HIP_VISIBLE_DEVICES:${t}`)] };
}
