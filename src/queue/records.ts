/** A results record's identity: a case is (phase, pass, index); it appears once in a results file. */
export function recordKey(rec: Record<string, unknown>): string {
  return `${String(rec.phase)}:${String(rec.pass)}:${String(rec.index)}`;
}

/** The value of `name` in a Redis stream entry's flat `[name, value, …]` fields, or null. */
export function streamField(fields: string[], name: string): string | null {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1]!;
  return null;
}
