/** A results record's identity: a case is (phase, pass, index); it appears once in a results file. */
export function recordKey(rec: Record<string, unknown>): string {
  return `${String(rec.phase)}:${String(rec.pass)}:${String(rec.index)}`;
}
