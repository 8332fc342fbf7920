const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
/** What ends a run of plain text outside quotes. */
const SPECIAL = /[,\r\n]/g;

/** One CSV record: its fields and the 1-based line it starts on. */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/** RFC 4180 CSV (quoted fields may hold commas, newlines and doubled quotes); blank lines are skipped. */
export function parseCsv(text: string): CsvRecord[] {
  const p = new CsvParser();
  const rows = p.push(text);
  rows.push(...p.end());
  return rows;
}

/** {@link parseCsv} fed a piece at a time: `push` returns the records a piece completes, `end` the last one. */
export class CsvParser {
  private fields: string[] = [];
  private field = '';
  private quoted = false;
  /** In a quoted field, a `"` was the last character: a doubled quote or the field's end, by what follows. */
  private quoteEnds = false;
  /** A CR ended the last record: a LF right after it belongs to it. */
  private afterCr = false;
  private line = 1;
  private rowLine = 1;
  private any = false;
  private started = false;
  private out: CsvRecord[] = [];

  push(piece: string): CsvRecord[] {
    let s = piece;
    if (!this.started && s.length > 0) {
      this.started = true;
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    const n = s.length;
    let i = 0;
    // Text is taken a run at a time (up to the next character that means something), not a character at a time.
    while (i < n) {
      const ch = s.charCodeAt(i);
      if (this.afterCr) {
        this.afterCr = false;
        if (ch === LF) {
          i++;
          continue;
        }
      }
      if (this.quoteEnds) {
        this.quoteEnds = false;
        if (ch === QUOTE) {
          this.field += '"';
          i++;
          continue;
        }
        this.quoted = false; // and `ch` is read outside the quotes, below
      }
      if (this.quoted) {
        const q = s.indexOf('"', i);
        const end = q < 0 ? n : q;
        for (let nl = s.indexOf('\n', i); nl >= 0 && nl < end; nl = s.indexOf('\n', nl + 1)) this.line++;
        this.field += s.slice(i, end);
        if (q >= 0) this.quoteEnds = true;
        i = end + 1;
        continue;
      }
      if (ch === QUOTE && this.field === '') {
        this.quoted = true;
        this.any = true;
        i++;
      } else if (ch === COMMA) {
        this.fields.push(this.field);
        this.field = '';
        this.any = true;
        i++;
      } else if (ch === LF || ch === CR) {
        if (ch === CR) this.afterCr = true;
        this.endRow();
        this.line++;
        this.rowLine = this.line;
        i++;
      } else {
        // Plain text up to the next comma or line end (a quote inside an unquoted field is text).
        SPECIAL.lastIndex = i + 1;
        const m = SPECIAL.exec(s);
        const end = m === null ? n : m.index;
        this.field += s.slice(i, end);
        i = end;
      }
    }
    const done = this.out;
    this.out = [];
    return done;
  }

  /** The text has ended: the record still open, if any. */
  end(): CsvRecord[] {
    this.quoteEnds = false;
    this.quoted = false;
    this.endRow();
    const done = this.out;
    this.out = [];
    return done;
  }

  private endRow(): void {
    if (this.any || this.field !== '' || this.fields.length > 0) this.out.push({ line: this.rowLine, fields: [...this.fields, this.field] });
    this.fields = [];
    this.field = '';
    this.any = false;
  }
}
