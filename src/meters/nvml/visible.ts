/**
 * The NVML indices a process may use under `CUDA_VISIBLE_DEVICES`, in the order given. Unset: every
 * device. Empty: none. Entries are indices or `GPU-…` UUIDs (a unique prefix is enough); like CUDA,
 * parsing stops at the first entry that names no device (so `-1` hides them all).
 */
export function visibleDevices(
  env: string | undefined,
  uuids: readonly string[],
): { indices: number[]; ignored: string[] } {
  const all = uuids.map((_, i) => i);
  if (env === undefined) return { indices: all, ignored: [] };
  const indices: number[] = [];
  const tokens = env.split(',').map((t) => t.trim());
  if (tokens.length === 1 && tokens[0] === '') return { indices: [], ignored: [] };
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    let index: number | null = null;
    if (/^\d+$/.test(t)) {
      const n = Number(t);
      if (n < uuids.length) index = n;
    } else if (/^GPU-/i.test(t)) {
      const hits = all.filter((i) => uuids[i]!.toLowerCase().startsWith(t.toLowerCase()));
      if (hits.length === 1) index = hits[0]!;
    }
    if (index === null) return { indices, ignored: tokens.slice(k) };
    if (!indices.includes(index)) indices.push(index);
  }
  return { indices, ignored: [] };
}
