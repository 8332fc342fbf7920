// Verdicts read as FastChat's fastchat/llm_judge/common.py reads them, but a rating outside 1–10 is not read (docs/mt-bench.md).

const RATING = /\[\[(\d+\.?\d*)\]\]/;
const RATING_BACKUP = /\[(\d+\.?\d*)\]/;

/** The 1–10 rating of a judge's reply, or `null` when none is found or the one found is out of range. */
export function parseRating(text: string): number | null {
  const m = RATING.exec(text) ?? RATING_BACKUP.exec(text);
  if (!m) return null;
  const v = Number(m[1]);
  return v >= 1 && v <= 10 ? v : null;
}

/** `A`, `B` or `C` (tie): whichever of `[[A]]`, `[[B]]`, `[[C]]` appears, looked for in that order; `null` for none. */
export function parseChoice(text: string): 'A' | 'B' | 'C' | null {
  return (['A', 'B', 'C'] as const).find((c) => text.includes(`[[${c}]]`)) ?? null;
}
