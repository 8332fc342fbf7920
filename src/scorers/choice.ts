import type { Scorer } from '../core/types.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const patterns = new Map<number, RegExp>();

/** `\b([A-D])\b` for four options, `\b([A-E])\b` for five, and so on. */
function letterPattern(options: number): RegExp {
  const n = Math.min(26, Math.max(1, options));
  let re = patterns.get(n);
  if (!re) {
    re = new RegExp(`\\b([A-${ALPHABET[n - 1]}])\\b`);
    patterns.set(n, re);
  }
  return re;
}

/**
 * Multiple choice: the predicted answer is the first standalone option letter in the upper-cased
 * reply (seed 003: `\b([A-D])\b` for four choices). `expected` is the letter.
 */
export const choiceScorer: Scorer = {
  name: 'choice',
  score(c, answer) {
    if (c.expected === null) return { passed: null };
    const m = letterPattern(c.choices?.length ?? 4).exec(answer.toUpperCase());
    const extracted = m?.[1] ?? null;
    return { passed: extracted !== null && extracted === c.expected.trim().toUpperCase(), extracted };
  },
};

/** Why `expected` is not one of the case's option letters (A–D when it lists none), or `null`: it could never match. */
export function choiceProblem(expected: string, choices: readonly string[] | undefined): string | null {
  const n = Math.min(26, Math.max(1, choices?.length ?? 4));
  const letters = ALPHABET.slice(0, n);
  const e = expected.trim().toUpperCase();
  if (e.length === 1 && letters.includes(e)) return null;
  const asText = choices?.findIndex((ch) => ch.trim().toLowerCase() === expected.trim().toLowerCase()) ?? -1;
  const hint = asText >= 0 ? ` (it is the text of choice ${ALPHABET[asText]}: write "${ALPHABET[asText]}")` : '';
  return `"${expected}" is not one of the case's choices ${letters.split('').join(', ')}${choices ? '' : ' (no choices listed: four assumed)'}${hint}`;
}
