import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import type { ChatMessage } from '../core/types.js';
import { readTextFile } from '../read-text.js';
import { readJsonl, REFERENCE_CATEGORIES } from '../suites/mt-bench.js';
import { BUILTIN_PROMPTS_LABEL } from './summary.js';
import type { JudgeMode } from './prompts.js';

// Judge prompts in FastChat's `judge_prompts.jsonl` form, picked by name as gen_judgment.py picks them (docs/mt-bench.md).

/** sha256 of `fastchat/llm_judge/data/judge_prompts.jsonl` at the commit question.jsonl is pinned to. */
export const FASTCHAT_JUDGE_PROMPTS_SHA256 = 'fd283293406d024f44c174b094ef48031d0687a4682fd3a56b29b138f80281b6';

/** Where the judge's prompts came from: FastChat's pinned file, another file of that form, or joulebench's own. */
export interface PromptSetLabel {
  source: 'fastchat' | 'file' | 'builtin';
  path: string | null;
  sha256: string | null;
  /** Only FastChat's own file gives scores comparable with the published leaderboard. */
  comparable: boolean;
}

export type PromptEntry = Pick<z.infer<typeof entrySchema>, 'name' | 'system_prompt' | 'prompt_template'>;

export interface PromptSet {
  label: PromptSetLabel;
  /** null: joulebench's own prompts (src/judge/prompts.ts). */
  entries: ReadonlyMap<string, PromptEntry> | null;
}

export const BUILTIN_PROMPTS: PromptSet = { label: BUILTIN_PROMPTS_LABEL, entries: null };

const entrySchema = z
  .object({
    name: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
    type: z.enum(['single', 'pairwise'], { error: 'must be "single" or "pairwise"' }),
    system_prompt: z.string({ error: 'must be a string' }),
    prompt_template: z.string({ error: 'must be a string' }),
    output_format: z.string({ error: 'must be a string' }),
  })
  .loose();

type Slot = 'turn1' | 'turn1-ref' | 'turn2' | 'turn2-ref';

/** FastChat's prompt names (gen_judgment.py make_judge_single / make_judge_pairwise). */
const NAMES: Record<'single' | 'pairwise', Record<Slot, string>> = {
  single: { turn1: 'single-v1', 'turn1-ref': 'single-math-v1', turn2: 'single-v1-multi-turn', 'turn2-ref': 'single-math-v1-multi-turn' },
  pairwise: { turn1: 'pair-v2', 'turn1-ref': 'pair-math-v1', turn2: 'pair-v2-multi-turn', 'turn2-ref': 'pair-math-v1-multi-turn' },
};

/** The fields FastChat's run_judge_single / run_judge_pair fill for each prompt. */
const FIELDS: Record<'single' | 'pairwise', Record<Slot, readonly string[]>> = {
  single: {
    turn1: ['question', 'answer'],
    'turn1-ref': ['question', 'answer', 'ref_answer_1'],
    turn2: ['question_1', 'question_2', 'answer_1', 'answer_2'],
    'turn2-ref': ['question_1', 'question_2', 'answer_1', 'answer_2', 'ref_answer_1', 'ref_answer_2'],
  },
  pairwise: {
    turn1: ['question', 'answer_a', 'answer_b'],
    'turn1-ref': ['question', 'answer_a', 'answer_b', 'ref_answer_1'],
    turn2: ['question_1', 'question_2', 'answer_a_1', 'answer_b_1', 'answer_a_2', 'answer_b_2'],
    'turn2-ref': ['question_1', 'question_2', 'answer_a_1', 'answer_b_1', 'answer_a_2', 'answer_b_2', 'ref_answer_1', 'ref_answer_2'],
  },
};

const OUTPUT_FORMAT = { single: '[[rating]]', pairwise: '[[A]]' } as const;

function kindOf(mode: JudgeMode): 'single' | 'pairwise' {
  return mode === 'pairwise' ? 'pairwise' : 'single';
}

/** `{name}` fields in Python's str.format syntax (`{{`/`}}` are literal braces). */
function fieldsOf(template: string): string[] {
  return [...template.matchAll(/\{\{|\}\}|\{([^{}]*)\}/g)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

/** Python's str.format with keyword fields, in one pass: text inside a value is never substituted again. */
function pyFormat(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (m, k: string | undefined) => (k === undefined ? m[0]! : values[k]!));
}

/** Reads a FastChat-form prompts file and checks the four prompts `mode` uses (FastChat's output format, only its fields). */
export function readPromptSet(path: string, mode: JudgeMode): PromptSet {
  const where = 'judge prompts';
  const sha256 = createHash('sha256').update(readTextFile(path, 'E_CONFIG', { where: `${where} ${path}` })).digest('hex');
  const byName = new Map(readJsonl(path, entrySchema, 'E_CONFIG', where).map(({ row }) => [row.name, row]));
  const kind = kindOf(mode);
  const entries = new Map<string, PromptEntry>();
  for (const slot of Object.keys(NAMES[kind]) as Slot[]) {
    const name = NAMES[kind][slot];
    const e = byName.get(name);
    if (!e) throw new JoulebenchError('E_CONFIG', `${where} ${path}: no prompt named "${name}" (judge.mode ${mode} needs ${Object.values(NAMES[kind]).join(', ')})`);
    if (e.type !== kind || e.output_format !== OUTPUT_FORMAT[kind]) {
      throw new JoulebenchError('E_CONFIG', `${where} ${path}: "${name}" must have type "${kind}" and output_format "${OUTPUT_FORMAT[kind]}"`);
    }
    const unknown = fieldsOf(e.prompt_template).filter((f) => !FIELDS[kind][slot].includes(f));
    if (unknown.length > 0) throw new JoulebenchError('E_CONFIG', `${where} ${path}: "${name}": field {${unknown[0]}} is not one FastChat fills (${FIELDS[kind][slot].join(', ')})`);
    entries.set(name, { name, system_prompt: e.system_prompt, prompt_template: e.prompt_template });
  }
  const fastchat = sha256 === FASTCHAT_JUDGE_PROMPTS_SHA256;
  return { label: { source: fastchat ? 'fastchat' : 'file', path, sha256, comparable: fastchat }, entries };
}

/** The digest of the prompts a set gives `mode` (in the cache key): another wording never reuses a verdict. */
export function promptSetHash(set: PromptSet, mode: JudgeMode): string {
  const entries = [...(set.entries?.values() ?? [])];
  return 'sha256:' + createHash('sha256').update(canonicalJson({ mode: kindOf(mode), entries })).digest('hex');
}

/** What FastChat fills a judge prompt from: the question turns, the answers (A and B when pairwise), the case's category and references. */
interface FastChatInput {
  category: string;
  questions: readonly string[];
  answers: readonly string[];
  answersB?: readonly string[];
  reference?: readonly string[];
}

/** The messages FastChat sends for turn `questions.length` (1 or 2); throws for a reference category without a reference. */
export function fastChatPrompt(set: PromptSet, input: FastChatInput): { kind: string; messages: ChatMessage[] } {
  const kind = input.answersB ? 'pairwise' : 'single';
  const turn2 = input.questions.length === 2;
  const ref = REFERENCE_CATEGORIES.has(input.category);
  const slot: Slot = turn2 ? (ref ? 'turn2-ref' : 'turn2') : ref ? 'turn1-ref' : 'turn1';
  const entry = set.entries?.get(NAMES[kind][slot]);
  if (!entry) throw new JoulebenchError('E_CONFIG', `judge prompts ${set.label.path}: no prompt for ${kind} ${slot}`);
  const [q1, q2] = input.questions;
  const a = input.answers;
  const b = input.answersB ?? [];
  const v: Record<string, string> = turn2
    ? { question_1: q1!, question_2: q2!, answer_1: a[0]!, answer_2: a[1]!, answer_a_1: a[0]!, answer_a_2: a[1]!, answer_b_1: b[0] ?? '', answer_b_2: b[1] ?? '' }
    : { question: q1!, answer: a[0]!, answer_a: a[0]!, answer_b: b[0] ?? '' };
  if (ref) {
    const r = input.reference ?? [];
    if (r.length < input.questions.length) {
      throw new JoulebenchError('E_USAGE', `a ${input.category} question has no reference answer for turn ${r.length + 1}: FastChat's ${entry.name} needs one (--references reference.jsonl)`);
    }
    v.ref_answer_1 = r[0]!;
    if (turn2) v.ref_answer_2 = r[1]!;
  }
  return {
    kind: entry.name,
    messages: [
      { role: 'system', content: entry.system_prompt },
      { role: 'user', content: pyFormat(entry.prompt_template, v) },
    ],
  };
}
