import { pickVisible } from '../gpu.js';

/**
 * The NVML indices a process may use under `CUDA_VISIBLE_DEVICES`, in the order given. Entries are
 * indices or `GPU-…` UUIDs (a unique prefix is enough); `-1` names no device, so it hides them all.
 */
export function visibleDevices(env: string | undefined, uuids: readonly string[]): { indices: number[]; ignored: string[] } {
  const all = uuids.map((_, i) => i);
  return pickVisible(env, all, (t) => {
    if (/^\d+$/.test(t)) return Number(t) < uuids.length ? Number(t) : null;
    if (!/^GPU-/i.test(t)) return null;
    const hits = all.filter((i) => uuids[i]!.toLowerCase().startsWith(t.toLowerCase()));
    return hits.length === 1 ? hits[0]! : null;
  });
}
