import { readdirSync, statSync } from 'node:fs';
import { quote } from '../core/one-line.js';
import { basename, extname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { pythonJsonDumps } from '../core/py-json.js';
import { JoulebenchError } from '../core/errors.js';
import type { Case } from '../core/types.js';

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

/** `params.subjects` names subjects the data does not hold; `firstKnown`: its first nine subjects, sorted. */
export function missingSubjects(opts: Pick<MmluOptions, 'config_path'>, path: string, missing: readonly string[], firstKnown: readonly string[]): JoulebenchError {
  const some = firstKnown.slice(0, 8).join(', ');
  const where = opts.config_path ? `${opts.config_path}: ` : '';
  return new JoulebenchError('E_CONFIG', `${where}params.subjects: no questions for ${missing.map((m) => quote(m)).join(', ')} in ${path} (subjects there: ${some}${firstKnown.length > 8 ? ', …' : ''})`);
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

/** A data file that is neither .json, .jsonl nor .csv. */
export function unknownFileType(file: string, ext: string): JoulebenchError {
  return new JoulebenchError('E_INPUT', `mmlu ${file}: unknown file type ${quote(ext)} (use .json, .jsonl or .csv)`);
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
export function csvRow(file: string, subject: string, line: number, fields: readonly string[], n: number): MmluRow {
  const where = `mmlu ${file}: line ${line}`;
  if (fields.length !== 6) throw new JoulebenchError('E_INPUT', `${where}: expected 6 fields (question,A,B,C,D,answer), got ${fields.length}`);
  const [question, a, b, c, d, answer] = fields as [string, string, string, string, string, string];
  return row(where, { id: `${subject}-${n}`, subject, question, choices: [a, b, c, d], answer });
}

/** Whether a .jsonl file's text is one JSON array rather than a row per line (it starts with `[`). */
export function isJsonArrayText(text: string): boolean {
  return text.trimStart().startsWith('[');
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

/** One cais/mmlu-style row; `perSubject` counts rows per subject, for ids of rows without one (`<subject>-<n>`). */
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
