import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` dropped. Used for digests, so that
 * the same description always hashes the same.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** `sha256:` + hex sha256 of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** Pretty JSON with a trailing newline, keys in insertion order (reports build keys in a fixed order). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}
