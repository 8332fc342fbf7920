const isPlain = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A deep merge of plain objects; neither argument is modified. */
export function merge(base, override) {
  const out = { ...base };
  for (const [k, v] of Object.entries(override)) {
    out[k] = isPlain(v) && isPlain(base[k]) ? merge(base[k], v) : v;
  }
  return out;
}
