import { readdirSync, statSync } from 'node:fs';
import { readTextFile } from '../read-text.js';
import { quote } from '../core/one-line.js';
import { basename, extname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { digestOf } from '../core/canonical.js';
import { pythonJsonDumps } from '../core/py-json.js';
import { withRetryLabel } from './retry-label.js';
import { JoulebenchError } from '../core/errors.js';
import type { Case, Suite } from '../core/types.js';
import { parseCsv, type CsvRecord } from './csv.js';

/** The four option letters, in order. */
export const MMLU_LETTERS = ['A', 'B', 'C', 'D'] as const;
export type MmluLetter = (typeof MMLU_LETTERS)[number];

/** One MMLU question as loaded, whatever the file format. */
export interface MmluRow {
  id: string;
  subject: string;
  question: string;
  choices: [string, string, string, string];
  answer: MmluLetter;
}

export interface MmluOptions {
  /** Keep only these subjects (`params.subjects`). */
  subjects?: readonly string[];
  /** Keep the first N after filtering, in file order (`params.limit`). */
  limit?: number;
  /** `params.retry.max_attempts` when `params.retry` is set: relabels the version `…/retry-N`. */
  retry_max_attempts?: number;
  /** The dataset version label; default `mmlu/local-<12 hex of the rows' content>`. */
  version?: string;
  /** The config file the `params.*` options came from, named first in their errors. */
  config_path?: string;
}

/**
 * Loads MMLU questions from cais/mmlu-style JSON or JSONL rows (`question`, `subject`, `choices[4]`,
 * `answer` as 0–3 or A–D), a Hendrycks CSV (`question,A,B,C,D,answer`, subject from the file name),
 * or a directory of such files (sorted by name). No MMLU questions ship with joulebench.
 */
export function loadMmlu(path: string, opts: MmluOptions = {}): Suite {
  const rows = readMmluRows(path);
  const base = opts.version ?? mmluLocalVersion(digestOf(rows.map(mmluContent)));
  const version = withRetryLabel(base, opts.retry_max_attempts);
  const selected = selectRows(rows, opts, path);
  const cases: Case[] = selected.map(mmluCase);
  return { name: 'mmlu', version, scorer: 'choice', cases, source: `mmlu ${path}`, digest: mmluDigest(selected.map((r) => r.id), version) };
}

/**
 * Seed 003's digest, byte for byte the peer's (csbench, Python): `"sha256:" +
 * sha256(json.dumps({"ids": [...], "version": V}, sort_keys=True))`, with Python's default
 * separators (`", "`, `": "`) and `ensure_ascii` escaping (docs/integrity.md).
 */
export function mmluDigest(ids: readonly string[], version: string): string {
  return 'sha256:' + createHash('sha256').update(pythonJsonDumps({ ids: [...ids], version }), 'utf8').digest('hex');
}

/** What of a row the default version label covers: its content, not its id. */
export function mmluContent(r: MmluRow): Pick<MmluRow, 'subject' | 'question' | 'choices' | 'answer'> {
  return { subject: r.subject, question: r.question, choices: r.choices, answer: r.answer };
}

/** The default version label from the digest of every row's content (`sha256:…`): `mmlu/local-<12 hex>`. */
export function mmluLocalVersion(contentDigest: string): string {
  return `mmlu/local-${contentDigest.slice(7, 19)}`;
}

/** One row as the runner asks it. */
export function mmluCase(r: MmluRow): Case {
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

/** `params.subjects` then `params.limit`, in file order; a subject that matches nothing is an error. */
function selectRows(rows: readonly MmluRow[], opts: MmluOptions, path: string): MmluRow[] {
  let out = [...rows];
  if (opts.subjects && opts.subjects.length > 0) {
    const known = new Set(rows.map((r) => r.subject));
    const missing = opts.subjects.filter((s) => !known.has(s));
    if (missing.length > 0) throw missingSubjects(opts, path, missing, [...known].sort().slice(0, 9));
    const want = new Set(opts.subjects);
    out = out.filter((r) => want.has(r.subject));
  }
  if (opts.limit !== undefined) out = out.slice(0, opts.limit);
  return out;
}

/**
 * `params.subjects` names subjects the data does not hold. `firstKnown`: the data's first nine
 * subjects in sorted order (eight are named, a ninth adds `…`).
 */
export function missingSubjects(opts: Pick<MmluOptions, 'config_path'>, path: string, missing: readonly string[], firstKnown: readonly string[]): JoulebenchError {
  const some = firstKnown.slice(0, 8).join(', ');
  const where = opts.config_path ? `${opts.config_path}: ` : '';
  return new JoulebenchError('E_CONFIG', `${where}params.subjects: no questions for ${missing.map((m) => quote(m)).join(', ')} in ${path} (subjects there: ${some}${firstKnown.length > 8 ? ', …' : ''})`);
}

/** Reads every row from a file or a directory of files; problems name the file, line and key. */
export function readMmluRows(path: string): MmluRow[] {
  const rows = listMmluFiles(path).flatMap(readFileRows);
  if (rows.length === 0) throw new JoulebenchError('E_INPUT', `mmlu ${path}: no questions`);
  const seen = new Set<string>();
  for (const r of rows) {
    if (seen.has(r.id)) throw mmluDuplicate(path, r.id);
    seen.add(r.id);
  }
  return rows;
}

/** A row repeats an earlier row's id. */
export function mmluDuplicate(path: string, id: string): JoulebenchError {
  return new JoulebenchError('E_INPUT', `mmlu ${path}: id ${quote(id)} appears twice`);
}

/** The data files `path` names: itself, or a directory's .csv, .json and .jsonl files sorted by name. */
export function listMmluFiles(path: string): string[] {
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

function readFileRows(file: string): MmluRow[] {
  const text = readTextFile(file, 'E_INPUT', { where: `mmlu ${file}` });
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return csvRows(file, text);
  if (ext === '.json' || ext === '.jsonl') return jsonRows(file, text, ext);
  throw unknownFileType(file, ext);
}

/** A data file that is neither .json, .jsonl nor .csv. */
export function unknownFileType(file: string, ext: string): JoulebenchError {
  return new JoulebenchError('E_INPUT', `mmlu ${file}: unknown file type ${quote(ext)} (use .json, .jsonl or .csv)`);
}

/** Hendrycks CSV: no header (one is skipped if present); subject from `<subject>_test.csv`. */
function csvRows(file: string, text: string): MmluRow[] {
  const subject = csvSubject(file);
  const parsed = parseCsv(text);
  const body = parsed[0] && isCsvHeader(parsed[0].fields) ? parsed.slice(1) : parsed;
  return body.map((rec, n) => csvRow(file, subject, rec, n));
}

/** A Hendrycks CSV file's subject: its name without `_test` (or `_dev`, `_val`, …). */
export function csvSubject(file: string): string {
  return basename(file, extname(file)).replace(/_(test|dev|val|validation|train|auxiliary_train)$/i, '');
}

/** Whether a CSV file's first record is the optional header `question,A,B,C,D,answer`. */
export function isCsvHeader(fields: readonly string[]): boolean {
  return fields.map((f) => f.trim().toLowerCase()).join(',') === 'question,a,b,c,d,answer';
}

/** The `n`-th question (from 0, after any header) of a CSV file. */
export function csvRow(file: string, subject: string, { line, fields }: CsvRecord, n: number): MmluRow {
  const where = `mmlu ${file}: line ${line}`;
  if (fields.length !== 6) throw new JoulebenchError('E_INPUT', `${where}: expected 6 fields (question,A,B,C,D,answer), got ${fields.length}`);
  const [question, a, b, c, d, answer] = fields as [string, string, string, string, string, string];
  return row(where, { id: `${subject}-${n}`, subject, question, choices: [a, b, c, d], answer });
}

/** Whether a .jsonl file's text is one JSON array rather than a row per line (it starts with `[`). */
export function isJsonArrayText(text: string): boolean {
  return text.trimStart().startsWith('[');
}

function jsonRows(file: string, text: string, ext: string): MmluRow[] {
  let items: { value: unknown; where: string }[];
  if (ext === '.json' || isJsonArrayText(text)) {
    items = jsonDocumentItems(file, text);
  } else {
    items = [];
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        items.push({ value: JSON.parse(line), where: `mmlu ${file}: line ${i + 1}` });
      } catch (e) {
        throw jsonLineError(file, i + 1, e);
      }
    });
  }
  const perSubject = new Map<string, number>();
  return items.map(({ value, where }) => jsonRow(value, where, perSubject));
}

/** A .json file (or a .jsonl holding one array): the array, or a `{rows: […]}` object's. */
export function jsonDocumentItems(file: string, text: string): { value: unknown; where: string }[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new JoulebenchError('E_INPUT', `mmlu ${file}: not valid JSON (${(e as Error).message})`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { rows?: unknown })?.rows;
  if (!Array.isArray(list)) throw new JoulebenchError('E_INPUT', `mmlu ${file}: expected a JSON array of questions`);
  return list.map((value, i) => ({ value, where: `mmlu ${file}: item ${i}` }));
}

/** Line `n` (from 1) of a JSONL file is not JSON. */
export function jsonLineError(file: string, n: number, e: unknown): JoulebenchError {
  return new JoulebenchError('E_INPUT', `mmlu ${file}: line ${n}: not valid JSON (${(e as Error).message})`);
}

/**
 * One cais/mmlu-style row; `perSubject` counts the file's rows per subject so far (a row without an id
 * is `<subject>-<n>`, n counted from 0 within its subject, as the peer names it).
 */
export function jsonRow(value: unknown, where: string, perSubject: Map<string, number>): MmluRow {
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
