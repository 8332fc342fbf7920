import type { Usage } from '../core/types.js';

/** A reported completion above this many times the request's cap is not a count of this reply (a few over is normal). */
export const COMPLETION_OVER_CAP = 10;

/** One token count as a server sent it, under the name the server gave it (for the message). */
export interface ReportedCount {
  /** The field as the reply names it, e.g. `usage.completion_tokens`, `eval_count`. */
  field: string;
  /** The value as sent; `undefined` or `null`: the server did not say. */
  value: unknown;
  /** The request's cap on this count (completion tokens only), when one was sent. */
  cap?: number;
}

/**
 * Why a server's token count cannot be used, one line naming the field, or `null` when every count is
 * absent or a whole number >= 0 within {@link COMPLETION_OVER_CAP} × its cap.
 */
export function usageProblem(counts: readonly ReportedCount[]): string | null {
  for (const { field, value, cap } of counts) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number') return `${field} ${JSON.stringify(value)} is not a number`;
    if (!Number.isFinite(value)) return `${field} ${String(value)} is not a number`;
    if (value < 0) return `${field} ${value} is negative`;
    if (!Number.isSafeInteger(value)) return `${field} ${value} is not a whole number`;
    if (cap !== undefined && value > COMPLETION_OVER_CAP * cap) {
      return `${field} ${value} is more than ${COMPLETION_OVER_CAP} × the ${cap} tokens the request allowed`;
    }
  }
  return null;
}

/** A count already checked by {@link usageProblem}: the number, or `null` when the server did not say. */
function countOf(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

/** The `Usage` of an OpenAI `usage` object already checked by {@link usageProblem}. */
export function openaiUsage(u: unknown): Usage {
  const o = (u ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return { prompt_tokens: countOf(o.prompt_tokens), completion_tokens: countOf(o.completion_tokens) };
}

/** The counts of an OpenAI `usage` object (JSON reply or a stream's usage chunk), for {@link usageProblem}. */
export function openaiCounts(u: unknown, max_tokens: number): ReportedCount[] {
  const o = (u !== null && typeof u === 'object' ? u : {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return [
    { field: 'usage.prompt_tokens', value: o.prompt_tokens },
    { field: 'usage.completion_tokens', value: o.completion_tokens, cap: max_tokens },
  ];
}
