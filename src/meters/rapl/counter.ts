/**
 * The energy counted between two reads of a RAPL counter, µJ. A counter that went down wrapped at
 * `max_energy_range_uj`; without a readable max the true delta is unknown, so the sample is dropped
 * (summing a negative delta, or guessing, would be worse).
 */
export function counterDelta(prev_uj: number, cur_uj: number, max_uj: number | null): { delta_uj: number } | { dropped: string } {
  if (cur_uj >= prev_uj) return { delta_uj: cur_uj - prev_uj };
  if (max_uj === null || !(max_uj > 0) || prev_uj > max_uj) {
    return { dropped: 'counter wrapped but max_energy_range_uj is unreadable; sample dropped' };
  }
  return { delta_uj: max_uj - prev_uj + cur_uj };
}

/** Parses a sysfs integer attribute; throws on anything else (a half-written file, garbage). */
export function parseMicrojoules(text: string, path: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t)) throw new Error(`${path}: not an integer: ${JSON.stringify(t.slice(0, 40))}`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new Error(`${path}: out of range: ${t}`);
  return n;
}
