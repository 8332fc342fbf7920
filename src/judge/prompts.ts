import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import type { ChatMessage } from '../core/types.js';

// joulebench's own judge prompts (`judge.prompts: builtin`) in MT-Bench's verdict format: not comparable with published
// scores. The instructions show `[[N]]` and `[[X]]`, so a judge that echoes them gives no verdict.

/** The rubric modes a judge runs in. */
export const JUDGE_MODES = ['single', 'single-reference', 'pairwise'] as const;
export type JudgeMode = (typeof JUDGE_MODES)[number];

/** Which template a judgement used (recorded with it). */
type PromptKind = 'rate' | 'rate-ref' | 'rate-turn' | 'rate-turn-ref' | 'compare' | 'compare-turn';

/** The messages of one judge request and the template they came from. */
type JudgePrompt = { kind: PromptKind; messages: ChatMessage[] };

const SYSTEM_RATE =
  'You grade answers written by an AI assistant. Judge how helpful, correct, relevant, deep and clear the answer is, ' +
  'and how well it follows the instructions it was given. Give a short explanation first, staying neutral and ' +
  'ignoring how long the answer is. Then give your rating on a scale from 1 (worst) to 10 (best) as a number in ' +
  'double square brackets, exactly once, on its own, in the form [[N]] with N your rating.';

const SYSTEM_RATE_REF =
  'You grade answers written by an AI assistant to questions that have one correct answer. A reference answer ' +
  'is given: compare the assistant\'s answer with it, find and name any mistake, and judge correctness above ' +
  'everything else. Give a short explanation first, staying neutral. Then give your rating on a scale from 1 ' +
  '(worst) to 10 (best) as a number in double square brackets, exactly once, on its own, in the form [[N]] with N your rating.';

const SYSTEM_COMPARE =
  'You compare two AI assistants\' answers to the same user question and decide which answer is better. Judge ' +
  'helpfulness, correctness, relevance, depth and clarity, and how well each follows the instructions. The order ' +
  'in which the answers are shown must not sway you, nor their length, nor the assistants\' names. Explain your ' +
  'comparison briefly, then give your verdict exactly once, on its own, as [[X]] with X the letter A if assistant A ' +
  'is better, B if assistant B is better, or C for a tie.';

const TEMPLATES = {
  rate: { system: SYSTEM_RATE, user: '<question>\n{question}\n</question>\n\n<answer>\n{answer}\n</answer>' },
  'rate-ref': {
    system: SYSTEM_RATE_REF,
    user: '<question>\n{question}\n</question>\n\n<reference>\n{reference}\n</reference>\n\n<answer>\n{answer}\n</answer>',
  },
  'rate-turn': {
    system: SYSTEM_RATE + ' Rate only the assistant\'s answer to the last user message of the conversation.',
    user: '<conversation>\n{conversation}\n</conversation>',
  },
  'rate-turn-ref': {
    system: SYSTEM_RATE_REF + ' Rate only the assistant\'s answer to the last user message of the conversation.',
    user: '<reference>\n{reference}\n</reference>\n\n<conversation>\n{conversation}\n</conversation>',
  },
  compare: {
    system: SYSTEM_COMPARE,
    user: '<question>\n{question}\n</question>\n\n<answer_a>\n{answer_a}\n</answer_a>\n\n<answer_b>\n{answer_b}\n</answer_b>',
  },
  'compare-turn': {
    system: SYSTEM_COMPARE + ' Compare only the two assistants\' answers to the last user message.',
    user: '<conversation_a>\n{conversation_a}\n</conversation_a>\n\n<conversation_b>\n{conversation_b}\n</conversation_b>',
  },
} as const satisfies Record<PromptKind, { system: string; user: string }>;

/** The templates a mode can use. */
const MODE_KINDS: Record<JudgeMode, readonly PromptKind[]> = {
  single: ['rate', 'rate-ref', 'rate-turn', 'rate-turn-ref'],
  'single-reference': ['rate', 'rate-ref', 'rate-turn', 'rate-turn-ref'],
  pairwise: ['compare', 'compare-turn'],
};

/** The digest of every template a mode can use, in the cache key and receipt: a changed prompt never reuses a verdict. */
export function promptHash(mode: JudgeMode): string {
  const used = Object.fromEntries(MODE_KINDS[mode].map((k) => [k, TEMPLATES[k]]));
  return 'sha256:' + createHash('sha256').update(canonicalJson({ mode, templates: used })).digest('hex');
}

function fill(template: string, values: Record<string, string>): string {
  // One pass, so text inside a value (an answer containing "{answer}") is never substituted again.
  return template.replace(/\{([a-z_]+)\}/g, (m, k: string) => values[k] ?? m);
}

function prompt(kind: PromptKind, values: Record<string, string>): JudgePrompt {
  const t = TEMPLATES[kind];
  return {
    kind,
    messages: [
      { role: 'system', content: t.system },
      { role: 'user', content: fill(t.user, values) },
    ],
  };
}

/** A conversation as the judge reads it: each user turn, then the assistant's answer to it. */
function transcript(questions: readonly string[], answers: readonly string[]): string {
  return questions.map((q, i) => `### User\n${q}\n\n### Assistant\n${answers[i] ?? ''}`).join('\n\n');
}

/** Messages asking for a 1–10 rating: with an answer per turn, the last turn in the conversation's context (MT-Bench's turn 2). */
export function ratingPrompt(input: { questions: readonly string[]; answers: readonly string[]; reference?: readonly string[] }): JudgePrompt {
  const { questions, answers, reference } = input;
  const ref = reference && reference.length > 0 ? reference : undefined;
  if (questions.length > 1 && answers.length === questions.length) {
    const conversation = transcript(questions, answers);
    if (ref) {
      const refText = questions.map((_, i) => `Turn ${i + 1}: ${ref[i] ?? '(none given)'}`).join('\n\n');
      return prompt('rate-turn-ref', { conversation, reference: refText });
    }
    return prompt('rate-turn', { conversation });
  }
  const question = questions.join('\n\n');
  const answer = answers.join('\n\n');
  if (ref) return prompt('rate-ref', { question, answer, reference: ref.slice(0, questions.length).join('\n\n') });
  return prompt('rate', { question, answer });
}

/** Messages asking which of two answers (A shown first) is better: `[[A]]`, `[[B]]` or `[[C]]`. */
export function comparePrompt(input: { questions: readonly string[]; answersA: readonly string[]; answersB: readonly string[] }): JudgePrompt {
  const { questions, answersA, answersB } = input;
  if (questions.length > 1 && answersA.length === questions.length && answersB.length === questions.length) {
    return prompt('compare-turn', { conversation_a: transcript(questions, answersA), conversation_b: transcript(questions, answersB) });
  }
  return prompt('compare', { question: questions.join('\n\n'), answer_a: answersA.join('\n\n'), answer_b: answersB.join('\n\n') });
}
