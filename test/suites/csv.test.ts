import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CsvParser, parseCsv, type CsvRecord } from '../../src/suites/csv.js';

/**
 * The parser as it was before it read pieces (main 3e65445), a character at a time: the reference the
 * piecewise one must agree with on any text, however it is cut.
 */
function referenceCsv(text: string): CsvRecord[] {
  const rows: CsvRecord[] = [];
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

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

it('CSV read in pieces cut anywhere gives the records (and lines) of the whole text, on 3,000 random texts', () => {
  const rnd = lcg(42);
  const alphabet = ['a', 'b', ',', '"', '"', '""', '\n', '\r', '\r\n', ' ', 'é', '🙂', '\ufeff'];
  for (let t = 0; t < 3000; t++) {
    const len = Math.floor(rnd() * 60);
    let text = '';
    for (let k = 0; k < len; k++) text += alphabet[Math.floor(rnd() * alphabet.length)]!;
    const want = referenceCsv(text);
    assert.deepEqual(parseCsv(text), want, JSON.stringify(text));
    // The same text pushed in random pieces (a piece may end inside "", \r\n or a quoted field).
    const p = new CsvParser();
    const got: CsvRecord[] = [];
    for (let at = 0; at < text.length; ) {
      const next = Math.min(text.length, at + 1 + Math.floor(rnd() * 5));
      got.push(...p.push(text.slice(at, next)));
      at = next;
    }
    got.push(...p.end());
    assert.deepEqual(got, want, `in pieces: ${JSON.stringify(text)}`);
  }
});

it('quoted commas, doubled quotes and newlines; CRLF and lone CR; a BOM; blank lines skipped', () => {
  assert.deepEqual(parseCsv('\ufeff"a,b","c""d",e\r\n\r\n"x\ny",z\rlast'), [
    { line: 1, fields: ['a,b', 'c"d', 'e'] },
    { line: 3, fields: ['x\ny', 'z'] },
    { line: 5, fields: ['last'] },
  ]);
});
