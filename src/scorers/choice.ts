import type { Scorer } from '../core/types.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
/** `\b([A-A])\b` for one option … `\b([A-D])\b` for four … `\b([A-Z])\b` for 26. */
const LETTER_PATTERNS = [...ALPHABET].map((last) => new RegExp(`\\b([A-${last}])\\b`));

/** How many option letters a case has: its choices (four when it lists none), 1 to 26. */
function optionCount(choices: readonly string[] | undefined): number {
  return Math.min(26, Math.max(1, choices?.length ?? 4));
}

/** Multiple choice: the first standalone option letter in the upper-cased reply (seed 003: `\b([A-D])\b`) against `expected`. */
export const choiceScorer: Scorer = {
  name: 'choice',
  score(c, answer) {
    if (c.expected === null) return { passed: null };
    const m = LETTER_PATTERNS[optionCount(c.choices) - 1]!.exec(answer.toUpperCase());
    const extracted = m?.[1] ?? null;
    return { passed: extracted !== null && extracted === c.expected.trim().toUpperCase(), extracted };
  },
};

/** Why `expected` is not one of the case's option letters (A–D when it lists none), or `null`: it could never match. */
export function choiceProblem(expected: string, choices: readonly string[] | undefined): string | null {
  const letters = ALPHABET.slice(0, optionCount(choices));
  const e = expected.trim().toUpperCase();
  if (e.length === 1 && letters.includes(e)) return null;
  const asText = choices?.findIndex((ch) => ch.trim().toLowerCase() === expected.trim().toLowerCase()) ?? -1;
  const hint = asText >= 0 ? ` (it is the text of choice ${ALPHABET[asText]}: write "${ALPHABET[asText]}")` : '';
  return `"${expected}" is not one of the case's choices ${letters.split('').join(', ')}${choices ? '' : ' (no choices listed: four assumed)'}${hint}`;
}
