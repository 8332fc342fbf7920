/** The energy between two reads of a RAPL counter, µJ; a wrap with no readable max is dropped, never guessed. */
export function counterDelta(prev_uj: number, cur_uj: number, max_uj: number | null): { delta_uj: number } | { dropped: string } {
  if (cur_uj >= prev_uj) return { delta_uj: cur_uj - prev_uj };
  if (max_uj === null || !(max_uj > 0) || prev_uj > max_uj) {
    return { dropped: 'counter wrapped but max_energy_range_uj is unreadable; sample dropped' };
  }
  return { delta_uj: max_uj - prev_uj + cur_uj };
}

/** Parses a sysfs integer attribute; throws on anything else (empty, text, negative, a half-written file). */
export function parseMicrojoules(text: string, path: string): number {
  const t = text.trim();
  if (t === '') throw new Error(`${path}: empty`);
  if (!/^\d+$/.test(t)) throw new Error(`${path}: not a non-negative integer: ${JSON.stringify(t.slice(0, 40))}`);
  const n = Number(t);
  if (!Number.isSafeInteger(n)) throw new Error(`${path}: out of range: ${t}`);
  return n;
}

/** Parses a counter value; one above `max_energy_range_uj` is as wrong as text. Throws with the reason. */
export function parseCounter(text: string, path: string, max_uj: number | null): number {
  const n = parseMicrojoules(text, path);
  if (max_uj !== null && max_uj > 0 && n > max_uj) throw new Error(`${path}: ${n} is above max_energy_range_uj ${max_uj}`);
  return n;
}
