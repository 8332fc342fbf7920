import { z } from 'zod';
import { JoulebenchError, type ErrorCode } from '../core/errors.js';
import type { Case, Suite } from '../core/types.js';
import { readTextFile } from '../read-text.js';

/** MT-Bench's eight categories (Zheng et al. 2023), in the order its plots draw them. */
export const MT_BENCH_CATEGORIES = ['writing', 'roleplay', 'reasoning', 'math', 'coding', 'extraction', 'stem', 'humanities'] as const;

/** The categories judged against a reference answer: FastChat's NEED_REF_CATS (fastchat/llm_judge/common.py) for MT-Bench. */
export const REFERENCE_CATEGORIES: ReadonlySet<string> = new Set(['math', 'reasoning', 'coding']);

/** One line of FastChat's `question.jsonl`. */
const questionSchema = z
  .object({
    question_id: z.union([z.number().int(), z.string().min(1)], { error: 'must be an integer or a non-empty string' }),
    category: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
    turns: z.array(z.string({ error: 'must be strings' }).min(1, 'must not be empty'), { error: 'must be a list of strings' }).min(1, 'must hold at least one turn'),
    reference: z.array(z.string({ error: 'must be strings' }), { error: 'must be a list of strings' }).optional(),
  })
  .loose();

/** One line of FastChat's reference-answer file (`reference_answer/gpt-4.jsonl`): `choices[0].turns` are the references. */
const referenceSchema = z
  .object({
    question_id: z.union([z.number().int(), z.string().min(1)], { error: 'must be an integer or a non-empty string' }),
    choices: z
      .array(z.object({ turns: z.array(z.string({ error: 'must be strings' }), { error: 'must be a list of strings' }) }).loose(), {
        error: 'must be a list of {turns}',
      })
      .min(1, 'must hold at least one choice'),
  })
  .loose();

export interface MtBenchOptions {
  /** FastChat's reference-answer JSONL; its answers replace a question's own `reference`. */
  references?: string;
}

/** Loads FastChat's MT-Bench `question.jsonl` (and optional reference answers): a judged multi-turn case per question. */
export function loadMtBench(path: string, opts: MtBenchOptions = {}): Suite {
  const rows = readJsonl(path, questionSchema, 'E_SUITE', 'mt-bench questions');
  const refs = new Map<string, string[]>();
  if (opts.references) {
    for (const { row, line } of readJsonl(opts.references, referenceSchema, 'E_SUITE', 'mt-bench references')) {
      const id = String(row.question_id);
      if (refs.has(id)) throw new JoulebenchError('E_SUITE', `mt-bench references ${opts.references}: line ${line}: question_id: ${id} appears twice`);
      refs.set(id, row.choices[0]!.turns);
    }
  }
  const seen = new Map<string, number>();
  const cases: Case[] = rows.map(({ row, line }) => {
    const qid = String(row.question_id);
    const prev = seen.get(qid);
    if (prev !== undefined) throw new JoulebenchError('E_SUITE', `mt-bench questions ${path}: line ${line}: question_id: ${qid} already on line ${prev}`);
    seen.set(qid, line);
    const c: Case = { id: `mt-bench-${qid}`, turns: row.turns, expected: null, dataset: row.category, weight: 1, tags: [row.category], scorer: 'judge' };
    const reference = refs.get(qid) ?? row.reference;
    if (reference !== undefined && reference.length > 0) c.reference = reference;
    return c;
  });
  if (cases.length === 0) throw new JoulebenchError('E_SUITE', `mt-bench questions ${path}: no questions in the file`);
  for (const id of refs.keys()) {
    if (!seen.has(id)) throw new JoulebenchError('E_SUITE', `mt-bench references ${opts.references}: question_id: ${id} is not in ${path}`);
  }
  return { name: 'mt-bench', version: '1', scorer: 'judge', cases, source: path };
}

/** Reads a JSONL file row by row through a schema; a problem is one line naming the file, line and key. */
export function readJsonl<T>(path: string, schema: z.ZodType<T>, code: ErrorCode, what: string): { row: T; line: number }[] {
  const text = readTextFile(path, code, { where: `${what} ${path}` });
  const out: { row: T; line: number }[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new JoulebenchError(code, `${what} ${path}: line ${i + 1}: not valid JSON (${(e as Error).message})`);
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.path.map(String).join('.') || '(line)';
      const message = issue.code === 'invalid_type' && valueAt(value, issue.path) === undefined ? 'is required' : issue.message;
      throw new JoulebenchError(code, `${what} ${path}: line ${i + 1}: ${key}: ${message}`);
    }
    out.push({ row: parsed.data, line: i + 1 });
  });
  return out;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}
