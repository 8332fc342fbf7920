import { createHash, type Hash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { Parser } from 'csv-parse';
import { JoulebenchError } from '../core/errors.js';
import { quote } from '../core/one-line.js';
import { pythonJsonDumps, pythonJsonString } from '../core/py-json.js';
import type { Case, StreamedSuite, Suite } from '../core/types.js';
import { SuiteDigester } from './digest.js';
import { changedOnDisk, firstRepeat, IdFingerprints, inBatches, inMemory, sameStamp } from './jsonl-stream.js';
import { fileText, type FileStamp } from './lines.js';
import { withRetryLabel } from './retry-label.js';
import { compileFilter, describeSelection, type Selection } from './select.js';

/** The four option letters, in order. */
export const MMLU_LETTERS = ['A', 'B', 'C', 'D'] as const;
type MmluLetter = (typeof MMLU_LETTERS)[number];

/** One MMLU question as loaded, whatever the file format. */
export interface MmluRow {
  id: string;
  subject: string;
  question: string;
  choices: [string, string, string, string];
  answer: MmluLetter;
}

/** `params.subjects`, `params.limit` (the first N after them) and the version label's parts. */
export interface MmluOptions {
  subjects?: readonly string[];
  limit?: number;
  /** `params.retry.max_attempts` when `params.retry` is set: relabels the version `…/retry-N`. */
  retry_max_attempts?: number;
  /** The dataset version label; default `mmlu/local-<12 hex of the rows' content>`. */
  version?: string;
  /** The config file the `params.*` options came from, named first in their errors. */
  config_path?: string;
}

/** Seed 003's digest, byte for byte the peer's Python `json.dumps({"ids": [...], "version": V}, sort_keys=True)` (docs/integrity.md). */
export function mmluDigest(ids: readonly string[], version: string): string {
  return 'sha256:' + createHash('sha256').update(pythonJsonDumps({ ids: [...ids], version }), 'utf8').digest('hex');
}

/** One row as the runner asks it. */
function mmluCase(r: MmluRow): Case {
  return { id: r.id, prompt: mmluPrompt(r), expected: r.answer, dataset: r.subject, choices: [...r.choices], weight: 1, tags: ['mmlu', r.subject] };
}

/** The 0-shot prompt: an instruction, a blank line, the question, `A. …` to `D. …`, then `Answer:`. */
export function mmluPrompt(r: Pick<MmluRow, 'subject' | 'question' | 'choices'>): string {
  const topic = r.subject.replace(/_/g, ' ');
  return [
    // No standalone A–D in the instruction, so a reply that repeats it is not scored as a choice.
    `Answer the following multiple choice question about ${topic} with the letter of the correct option only.`,
    '',
    r.question,
    ...r.choices.map((c, i) => `${MMLU_LETTERS[i]}. ${c}`),
    'Answer:',
  ].join('\n');
}

/** `params.subjects` names subjects the data does not hold; `firstKnown`: its first nine subjects, sorted. */
function missingSubjects(opts: Pick<MmluOptions, 'config_path'>, path: string, missing: readonly string[], firstKnown: readonly string[]): JoulebenchError {
  const some = firstKnown.slice(0, 8).join(', ');
  const where = opts.config_path ? `${opts.config_path}: ` : '';
  return new JoulebenchError('E_CONFIG', `${where}params.subjects: no questions for ${missing.map((m) => quote(m)).join(', ')} in ${path} (subjects there: ${some}${firstKnown.length > 8 ? ', …' : ''})`);
}

/** A row repeats an earlier row's id. */
function mmluDuplicate(path: string, id: string): JoulebenchError {
  return new JoulebenchError('E_INPUT', `mmlu ${path}: id ${quote(id)} appears twice`);
}

/** The data files `path` names: itself, or a directory's .csv, .json and .jsonl files sorted by name. */
function listMmluFiles(path: string): string[] {
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw new JoulebenchError('E_INPUT', `mmlu ${path}: no such file or directory`);
  }
  const files = isDir
    ? readdirSync(path)
        .filter((f) => ['.csv', '.json', '.jsonl'].includes(extname(f).toLowerCase()))
        .sort()
        .map((f) => join(path, f))
    : [path];
  if (files.length === 0) throw new JoulebenchError('E_INPUT', `mmlu ${path}: no .csv, .json or .jsonl files in this directory`);
  return files;
}

/** One cais/mmlu-style row; `perSubject` counts rows per subject, for ids of rows without one (`<subject>-<n>`). */
function jsonRow(value: unknown, where: string, perSubject: Map<string, number>): MmluRow {
  const o = (value ?? {}) as Record<string, unknown>;
  if (typeof o.subject !== 'string' || o.subject === '') throw new JoulebenchError('E_INPUT', `${where}: subject must be a non-empty string`);
  const n = perSubject.get(o.subject) ?? 0;
  perSubject.set(o.subject, n + 1);
  const id = typeof o.id === 'string' && o.id !== '' ? o.id : typeof o.id === 'number' ? String(o.id) : `${o.subject}-${n}`;
  return row(where, { id, subject: o.subject, question: o.question, choices: o.choices, answer: o.answer });
}

function row(where: string, o: { id: string; subject: string; question: unknown; choices: unknown; answer: unknown }): MmluRow {
  if (typeof o.question !== 'string' || o.question.trim() === '') throw new JoulebenchError('E_INPUT', `${where}: question must be a non-empty string`);
  const ch = o.choices;
  if (!Array.isArray(ch) || ch.length !== 4 || !ch.every((c) => typeof c === 'string' || typeof c === 'number')) {
    throw new JoulebenchError('E_INPUT', `${where}: choices must be a list of 4 strings`);
  }
  return { id: o.id, subject: o.subject, question: o.question, choices: ch.map(String) as MmluRow['choices'], answer: letterOf(o.answer, where) };
}

/** `answer` as an index 0–3 (number or digit string) or a letter A–D. */
function letterOf(answer: unknown, where: string): MmluLetter {
  if (typeof answer === 'number' && Number.isInteger(answer) && answer >= 0 && answer <= 3) return MMLU_LETTERS[answer]!;
  if (typeof answer === 'string') {
    const s = answer.trim().toUpperCase();
    if (/^[0-3]$/.test(s)) return MMLU_LETTERS[Number(s)]!;
    if ((MMLU_LETTERS as readonly string[]).includes(s)) return s as MmluLetter;
  }
  throw new JoulebenchError('E_INPUT', `${where}: answer must be an index 0-3 or a letter A-D, got ${JSON.stringify(answer)}`);
}

/** MMLU questions (cais/mmlu JSON or JSONL rows, Hendrycks CSVs, or a directory of them) in memory: {@link streamMmlu}'s cases. */
export function loadMmlu(path: string, opts: MmluOptions = {}): Suite {
  return inMemory(streamMmlu(path, opts), true);
}

/** Every row of a file or a directory of files, as {@link streamMmlu} reads them; problems name the file, line and key. */
export function readMmluRows(path: string): MmluRow[] {
  const rows = listMmluFiles(path).flatMap((file) => [...fileRows(file, fileText(file, { code: 'E_INPUT', where: `mmlu ${file}` }))]);
  if (rows.length === 0) throw new JoulebenchError('E_INPUT', `mmlu ${path}: no questions`);
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.id)) throw mmluDuplicate(path, r.id);
    seen.add(r.id);
  }
  return rows;
}

export interface MmluStreamOptions extends MmluOptions {
  /** `--filter` / `--limit`, after `params.subjects` / `params.limit`. */
  selection?: Selection;
  chunkBytes?: number;
}

/**
 * MMLU data (`--suite mmlu --data`) read as a stream in two passes, like a JSONL suite: now every row
 * is checked (the whole-file reader's precedence) and the version and digest hashed; per pass of the
 * run the files are read again, their stamps and digests compared. A `.json` document is held whole.
 */
export function streamMmlu(path: string, opts: MmluStreamOptions = {}): StreamedSuite {
  const files = listMmluFiles(path);
  const sel = opts.selection ?? {};
  const what = describeSelection(sel);
  const read = (file: string, onOpen?: (s: FileStamp) => void): Iterable<string> =>
    fileText(file, { code: 'E_INPUT', where: `mmlu ${file}`, ...(onOpen ? { onOpen } : {}), ...(opts.chunkBytes !== undefined ? { chunkBytes: opts.chunkBytes } : {}) });
  const scanOpts: ScanOptions = {
    subjects: opts.subjects && opts.subjects.length > 0 ? new Set(opts.subjects) : null,
    limit: opts.limit ?? Infinity,
    selection: what === '' ? null : { re: sel.filter !== undefined ? compileFilter(sel.filter) : null, limit: sel.limit ?? Infinity },
  };

  // Pass 1: check everything, hash the content and the selection.
  const stamps: (FileStamp | null)[] = files.map(() => null);
  const scan = new MmluScan(scanOpts);
  const ids = new IdFingerprints();
  const known = scanOpts.subjects ? new FirstSubjects(scanOpts.subjects) : null;
  for (let f = 0; f < files.length; f++) {
    for (const r of fileRows(files[f]!, read(files[f]!, (s) => (stamps[f] = s)))) {
      ids.add(r.id);
      known?.add(r.subject);
      scan.add(r);
    }
  }
  if (scan.rows === 0) throw new JoulebenchError('E_INPUT', `mmlu ${path}: no questions`);
  const suspects = ids.repeated();
  const dup = suspects.size > 0 ? firstRepeat(rowIds(files, read), suspects) : null;
  if (dup !== null) throw mmluDuplicate(path, dup.id);
  if (known && opts.subjects) {
    const missing = opts.subjects.filter((s) => !known.found.has(s));
    if (missing.length > 0) throw missingSubjects(opts, path, missing, known.first);
  }
  const content = scan.contentDigest();
  const base = withRetryLabel(opts.version ?? `mmlu/local-${content.slice(7, 19)}`, opts.retry_max_attempts);
  if (scanOpts.selection && scan.count === 0) throw new JoulebenchError('E_USAGE', `--filter/--limit (${what}) selected no case of suite mmlu (${scan.picked} cases)`);
  const version = what === '' ? base : `${base}+${what}`;
  const digest = scan.digest(version);
  const count = scan.count;

  const changed = changedOnDisk('E_INPUT', `mmlu ${path}`);

  // Pass 2, once per pass of the run.
  function* cases(again: MmluScan): Generator<Case, void, undefined> {
    for (let f = 0; f < files.length; f++) {
      const file = files[f]!;
      const onOpen = sameStamp(stamps[f] ?? null, () => changed(`${file}: size, modification time or inode differ`));
      try {
        for (const r of fileRows(file, read(file, onOpen))) if (again.add(r)) yield mmluCase(r);
      } catch (e) {
        throw e instanceof JoulebenchError && !e.message.includes('changed on disk') ? changed(e.message) : e;
      }
    }
  }
  const batches = (): Generator<readonly Case[], void, undefined> => {
    const again = new MmluScan(scanOpts);
    return inBatches(cases(again), count, () => {
      if (again.count !== count || again.contentDigest() !== content || again.digest(version) !== digest) throw changed('its rows no longer have the digest checked');
    });
  };

  return { name: 'mmlu', version, scorer: 'choice', source: `mmlu ${path}`, digest, judged: false, stream: { count, batches } };
}

interface ScanOptions {
  /** `params.subjects` (null: every subject) and `params.limit`; `selection`: `--filter` / `--limit`. */
  subjects: ReadonlySet<string> | null;
  limit: number;
  selection: { re: RegExp | null; limit: number } | null;
}

/** What one pass over the rows adds up without keeping them: the content hash, the selection and its digest. */
class MmluScan {
  private readonly content = new BufferedHash('[');
  private readonly ids = new BufferedHash('{"ids": [');
  private readonly cases: SuiteDigester | null;
  rows = 0;
  /** Rows through `params.subjects` and `params.limit`. */
  picked = 0;

  constructor(private readonly o: ScanOptions) {
    this.cases = o.selection ? new SuiteDigester() : null;
  }

  get count(): number {
    return this.cases ? this.cases.count : this.picked;
  }

  /** Adds the next row; true when it is asked. */
  add(r: MmluRow): boolean {
    this.content.add((this.rows++ === 0 ? '' : ',') + canonicalContent(r));
    if (this.o.subjects !== null && !this.o.subjects.has(r.subject)) return false;
    if (this.picked >= this.o.limit) return false;
    this.ids.add((this.picked++ === 0 ? '' : ', ') + pythonJsonString(r.id));
    const sel = this.o.selection;
    if (sel === null || this.cases === null) return true;
    if (this.cases.count >= sel.limit) return false;
    // selectCases' keys: the id, the dataset (the subject) and the tags (`mmlu`, the subject).
    if (sel.re !== null && !(sel.re.test(r.id) || sel.re.test(r.subject) || sel.re.test('mmlu'))) return false;
    this.cases.add(mmluCase(r));
    return true;
  }

  /** The digest of every row's content but its id: what the default version label is cut from. */
  contentDigest(): string {
    return this.content.digest(']');
  }

  /** `mmluDigest(pickedIds, version)`, or the selected cases' `suiteDigest` under `version`. */
  digest(version: string): string {
    if (this.cases) return this.cases.digest({ name: 'mmlu', scorer: 'choice', version });
    return this.ids.digest(`], "version": ${pythonJsonString(version)}}`);
  }
}

/** The canonical JSON of a row's content (no id), written directly: keys in sorted order. */
function canonicalContent(r: MmluRow): string {
  const [a, b, c, d] = r.choices;
  const q = JSON.stringify;
  return `{"answer":${q(r.answer)},"choices":[${q(a)},${q(b)},${q(c)},${q(d)}],"question":${q(r.question)},"subject":${q(r.subject)}}`;
}

/** A sha256 fed text in pieces of about 64 KiB (a hash update per row costs more than the hashing). */
class BufferedHash {
  private readonly hash: Hash = createHash('sha256');
  private pending: string;

  constructor(first: string) {
    this.pending = first;
  }

  add(text: string): void {
    this.pending += text;
    if (this.pending.length >= 1 << 16) {
      this.hash.update(this.pending, 'utf8');
      this.pending = '';
    }
  }

  /** `sha256:` + hex of everything added, then `last`; adding may go on. */
  digest(last: string): string {
    return 'sha256:' + this.hash.copy().update(this.pending + last, 'utf8').digest('hex');
  }
}

/** For `params.subjects`: which of the asked subjects the data holds, and its first nine subjects in sorted order (the message's). */
class FirstSubjects {
  readonly first: string[] = [];
  readonly found = new Set<string>();

  constructor(private readonly asked: ReadonlySet<string>) {}

  add(subject: string): void {
    if (this.asked.has(subject)) this.found.add(subject);
    const f = this.first;
    if (f.length === 9 && subject >= f[8]!) return;
    if (f.includes(subject)) return;
    let i = f.length;
    while (i > 0 && f[i - 1]! > subject) i--;
    f.splice(i, 0, subject);
    if (f.length > 9) f.pop();
  }
}

/** The rows of one data file; a problem is thrown once the file is read to its end (the whole-file reader's precedence). */
function* fileRows(file: string, pieces: Iterable<string>): Generator<MmluRow, void, undefined> {
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return yield* csvFileRows(file, pieces);
  if (ext === '.json' || ext === '.jsonl') return yield* jsonFileRows(file, ext, pieces);
  // The whole-file reader reads the file before it looks at its type: its problems come first.
  for (const _ of pieces);
  throw new JoulebenchError('E_INPUT', `mmlu ${file}: unknown file type ${quote(ext)} (use .json, .jsonl or .csv)`);
}

/** A Hendrycks CSV file's rows, parsed a piece at a time by csv-parse (RFC 4180; blank lines skipped). */
function* csvFileRows(file: string, pieces: Iterable<string>): Generator<MmluRow, void, undefined> {
  // Hendrycks' file names: the subject, then `_test` (or `_dev`, `_val`, …).
  const subject = basename(file, extname(file)).replace(/_(test|dev|val|validation|train|auxiliary_train)$/i, '');
  const rows: MmluRow[] = [];
  let first = true;
  let n = 0;
  let crlfInside = 0;
  let problem: unknown = null;
  const onRecord = (fields: string[], info: { lines: number }): null => {
    // The optional header `question,A,B,C,D,answer`.
    const header = first && fields.map((f) => f.trim().toLowerCase()).join(',') === 'question,a,b,c,d,answer';
    first = false;
    if (problem !== null || header) return null;
    // csv-parse counts to the record's last line, a CRLF inside quotes as two: the message names the line it starts on.
    const breaks = (re: RegExp): number => fields.reduce((k, f) => k + (f.match(re)?.length ?? 0), 0);
    crlfInside += breaks(/\r\n/g);
    const line = info.lines - crlfInside - breaks(/\r\n|\r|\n/g);
    const where = `mmlu ${file}: line ${line}`;
    try {
      if (fields.length !== 6) throw new JoulebenchError('E_INPUT', `${where}: expected 6 fields (question,A,B,C,D,answer), got ${fields.length}`);
      const [question, a, b, c, d, answer] = fields as [string, string, string, string, string, string];
      // The n-th question (from 0, after any header).
      rows.push(row(where, { id: `${subject}-${n++}`, subject, question, choices: [a, b, c, d], answer }));
    } catch (e) {
      problem = e;
    }
    return null;
  };
  const csv = new Parser({ bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, record_delimiter: ['\r\n', '\n', '\r'], on_record: onRecord });
  csv.on('error', () => undefined); // read from `errored` below
  const parsed = (): MmluRow[] => {
    if (problem === null && csv.errored) problem = new JoulebenchError('E_INPUT', `mmlu ${file}: not valid CSV (${csv.errored.message})`);
    return rows.splice(0);
  };
  for (const piece of pieces) {
    if (problem !== null) continue; // read on: bad UTF-8 further on comes first
    csv.write(piece);
    yield* parsed();
  }
  if (problem === null) csv.end();
  yield* parsed();
  if (problem !== null) throw problem;
}

function* jsonFileRows(file: string, ext: string, pieces: Iterable<string>): Generator<MmluRow, void, undefined> {
  // A .json file is one document; a .jsonl file is one too when its first non-blank character is `[`.
  let doc: boolean | null = ext === '.json' ? true : null;
  const held: string[] = [];
  let partial = '';
  let lineNo = 0;
  let jsonProblem: unknown = null;
  let rowProblem: unknown = null;
  const perSubject = new Map<string, number>();
  const line = (text: string): MmluRow | null => {
    lineNo++;
    if (text.trim() === '' || jsonProblem !== null) return null;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      jsonProblem = new JoulebenchError('E_INPUT', `mmlu ${file}: line ${lineNo}: not valid JSON (${(e as Error).message})`);
      return null;
    }
    if (rowProblem !== null) return null;
    try {
      return jsonRow(value, `mmlu ${file}: line ${lineNo}`, perSubject);
    } catch (e) {
      rowProblem = e;
      return null;
    }
  };
  const linesOf = (text: string): MmluRow[] => {
    const parts = text.split('\n');
    parts[0] = partial + parts[0]!;
    partial = parts.pop()!;
    const out: MmluRow[] = [];
    for (const p of parts) {
      const r = line(p);
      if (r !== null) out.push(r);
    }
    return out;
  };
  for (const piece of pieces) {
    if (doc === null) {
      held.push(piece);
      if (piece.trimStart() === '') continue; // blank so far: not decided
      doc = piece.trimStart().startsWith('[');
      if (doc) continue;
      yield* linesOf(held.join(''));
      held.length = 0;
    } else if (doc) held.push(piece);
    else yield* linesOf(piece);
  }
  if (doc) {
    // The array, or a `{rows: […]}` object's.
    let parsed: unknown;
    try {
      parsed = JSON.parse(held.join(''));
    } catch (e) {
      throw new JoulebenchError('E_INPUT', `mmlu ${file}: not valid JSON (${(e as Error).message})`);
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { rows?: unknown })?.rows;
    if (!Array.isArray(list)) throw new JoulebenchError('E_INPUT', `mmlu ${file}: expected a JSON array of questions`);
    for (const [i, value] of list.entries()) yield jsonRow(value, `mmlu ${file}: item ${i}`, perSubject);
    return;
  }
  const last = line(held.join('') + partial);
  if (last !== null) yield last;
  if (jsonProblem !== null || rowProblem !== null) throw jsonProblem ?? rowProblem;
}

/** Every row's id, file by file. */
function* rowIds(files: readonly string[], read: (file: string) => Iterable<string>): Generator<string, void, undefined> {
  for (const file of files) for (const r of fileRows(file, read(file))) yield r.id;
}
