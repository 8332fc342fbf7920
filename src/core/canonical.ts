import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped (as JSON.stringify
 * does). Used for digests, so the same description always hashes the same. Written as one direct
 * pass because suite digests cover every case (100,000 in the benchmark).
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map((v) => write(v) ?? 'null').join(',') + ']';
      const obj = value as Record<string, unknown>;
      if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') return write((obj as { toJSON(): unknown }).toJSON());
      const parts: string[] = [];
      for (const k of Object.keys(obj).sort()) {
        const v = write(obj[k]);
        if (v !== undefined) parts.push(JSON.stringify(k) + ':' + v);
      }
      return '{' + parts.join(',') + '}';
    }
    default:
      return undefined; // undefined, functions, symbols: dropped like JSON.stringify
  }
}

/** `sha256:` + hex sha256 of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** Pretty JSON with a trailing newline, keys in insertion order (reports build keys in a fixed order). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}
