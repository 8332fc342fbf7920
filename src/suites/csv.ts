/**
 * RFC 4180 CSV: quoted fields may hold commas, newlines and doubled quotes. Returns rows of fields
 * with the 1-based line each row starts on; blank lines are skipped.
 */
export function parseCsv(text: string): { line: number; fields: string[] }[] {
  const rows: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  let any = false;
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const endRow = (): void => {
    if (any || field !== '' || fields.length > 0) rows.push({ line: rowLine, fields: [...fields, field] });
    fields = [];
    field = '';
    any = false;
  };
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quoted) {
      if (ch === '"') {
        if (s[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
      continue;
    }
    if (ch === '"' && field === '') {
      quoted = true;
      any = true;
    } else if (ch === ',') {
      fields.push(field);
      field = '';
      any = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && s[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else field += ch;
  }
  endRow();
  return rows;
}
