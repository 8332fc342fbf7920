import { pickVisible } from '../gpu.js';

/**
 * The AMD SMI indices a ROCm process may use: `ROCR_VISIBLE_DEVICES` first, then `HIP_VISIBLE_DEVICES`
 * indexes what it left (`ROCR=2,3 HIP=1` leaves 3). Decimal indices only: a UUID ends the list, ignored.
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
