/**
 * Strict readers of MT-Bench's verdict format. A verdict is read only when the judge wrote exactly one
 * kind of it: two different ratings, or none, is unparsable (and the judgement is asked again once,
 * then recorded as `judge_error`, never as a score).
 */

const RATING = /\[\[(\d{1,2}(?:\.\d+)?)\]\]/g;
const CHOICE = /\[\[([ABC])\]\]/g;

/** The 1–10 rating in `[[n]]`, or `null` when there is none, several different ones, or one out of range. */
export function parseRating(text: string): number | null {
  const found = new Set<number>();
  for (const m of text.matchAll(RATING)) found.add(Number(m[1]));
  if (found.size !== 1) return null;
  const v = [...found][0]!;
  return v >= 1 && v <= 10 ? v : null;
}

/** `A`, `B` or `C` (tie) from `[[A]]`/`[[B]]`/`[[C]]`, or `null` when there is none or they disagree. */
export function parseChoice(text: string): 'A' | 'B' | 'C' | null {
  const found = new Set<string>();
  for (const m of text.matchAll(CHOICE)) found.add(m[1]!);
  if (found.size !== 1) return null;
  return [...found][0] as 'A' | 'B' | 'C';
}
