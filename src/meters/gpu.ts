import type { EnergySource } from '../core/types.js';

/** How a GPU's energy is read: the driver's energy counter, or its power reading sampled and integrated. */
export type GpuMode = 'counter' | 'power';

/** A domain's label: the library's own for a counter, `integrated-power` for sampled power. */
export function modeSource(mode: GpuMode, counter: EnergySource): EnergySource {
  return mode === 'counter' ? counter : 'integrated-power';
}

/** The label of a reading over several GPUs: `mixed` when both modes are in use. */
export function gpusSource(gpus: readonly { mode: GpuMode }[], counter: EnergySource): EnergySource {
  const modes = new Set(gpus.map((g) => g.mode));
  return modes.size > 1 ? 'mixed' : modeSource(modes.has('power') ? 'power' : 'counter', counter);
}

/** Shuts a native library down when it was set up; shutting down is best effort. */
export function shutdownQuietly(binding: { shutdown(): void } | null, wasUp: boolean): void {
  if (binding === null || !wasUp) return;
  try {
    binding.shutdown();
  } catch {
    // nothing to do: the process is letting go of the library either way
  }
}

/**
 * Applies one `*_VISIBLE_DEVICES` list to the devices `from` (unset: all; empty: none). Like the runtimes,
 * the list stops at the first entry `resolve` finds no device for; it and the rest are returned as ignored.
 */
export function pickVisible(
  value: string | undefined,
  from: readonly number[],
  resolve: (entry: string) => number | null | undefined,
): { indices: number[]; ignored: string[] } {
  if (value === undefined) return { indices: [...from], ignored: [] };
  const tokens = value.split(',').map((t) => t.trim());
  if (tokens.length === 1 && tokens[0] === '') return { indices: [], ignored: [] };
  const indices: number[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const index = resolve(tokens[k]!);
    if (index === null || index === undefined) return { indices, ignored: tokens.slice(k) };
    if (!indices.includes(index)) indices.push(index);
  }
  return { indices, ignored: [] };
}
