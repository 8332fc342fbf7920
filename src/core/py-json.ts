/**
 * Python's `json.dumps(value, sort_keys=True)` with its defaults, byte for byte: separators `", "`
 * and `": "`, and `ensure_ascii` (every character outside printable ASCII, DEL included, written
 * `\uXXXX` in lower-case hex, UTF-16 surrogate pairs for characters beyond the BMP). For digests a
 * Python peer computes the same way (seed 003's csbench). Strings, finite numbers that are integers,
 * booleans, null, arrays and plain objects only: anything else throws rather than guess Python's form.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return pythonJsonString(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // Python writes floats with repr() (1.0, 1e+16); only integers are spelled the same in both.
      if (!Number.isSafeInteger(value)) throw new Error(`pythonJsonDumps: ${value} is not a safe integer`);
      return String(value);
    case 'object': {
      if (Array.isArray(value)) return '[' + value.map(pythonJsonDumps).join(', ') + ']';
      const obj = value as Record<string, unknown>;
      // Python sorts keys by code point; for keys of BMP characters that is UTF-16 order too.
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort(byCodePoint);
      return '{' + keys.map((k) => `${pythonJsonString(k)}: ${pythonJsonDumps(obj[k])}`).join(', ') + '}';
    }
    default:
      throw new Error(`pythonJsonDumps: cannot encode a ${typeof value}`);
  }
}

const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

/** A JSON string as Python's `ensure_ascii` encoder writes it. */
export function pythonJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    const short = SHORT[ch];
    if (short !== undefined) out += short;
    else if (code >= 0x20 && code <= 0x7e) out += ch;
    else out += '\\u' + code.toString(16).padStart(4, '0');
  }
  return out + '"';
}

function byCodePoint(a: string, b: string): number {
  const A = [...a].map((c) => c.codePointAt(0)!);
  const B = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(A.length, B.length); i++) if (A[i] !== B[i]) return A[i]! - B[i]!;
  return A.length - B.length;
}
