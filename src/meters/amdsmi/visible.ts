/**
 * The AMD SMI indices a ROCm process may use. `ROCR_VISIBLE_DEVICES` is applied first (by the ROCm
 * runtime), then `HIP_VISIBLE_DEVICES` indexes into what ROCR left visible, so `ROCR=2,3 HIP=1`
 * leaves device 3. Entries are decimal indices; like the runtime, a list stops at the first entry
 * that names no device. UUID entries are not matched (AMD SMI's UUID and ROCr's `GPU-<id>` differ
 * in form), so a UUID ends the list and is reported as ignored.
 */
export function rocmVisibleDevices(
  env: { rocr?: string | undefined; hip?: string | undefined },
  count: number,
): { indices: number[]; ignored: string[] } {
  const all = Array.from({ length: count }, (_, i) => i);
  const rocr = pick(env.rocr, all);
  const hip = pick(env.hip, rocr.indices);
  return { indices: hip.indices, ignored: [...rocr.ignored.map((t) => `ROCR_VISIBLE_DEVICES:${t}`), ...hip.ignored.map((t) => `HIP_VISIBLE_DEVICES:${t}`)] };
}

/** Applies one variable to the list `from` (indices into it). Unset: all; empty: none. */
function pick(value: string | undefined, from: readonly number[]): { indices: number[]; ignored: string[] } {
  if (value === undefined) return { indices: [...from], ignored: [] };
  const tokens = value.split(',').map((t) => t.trim());
  if (tokens.length === 1 && tokens[0] === '') return { indices: [], ignored: [] };
  const indices: number[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const n = /^\d+$/.test(t) ? Number(t) : NaN;
    const index = Number.isInteger(n) ? from[n] : undefined;
    if (index === undefined) return { indices, ignored: tokens.slice(k) };
    if (!indices.includes(index)) indices.push(index);
  }
  return { indices, ignored: [] };
}
