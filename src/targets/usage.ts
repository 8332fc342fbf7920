import type { Usage } from '../core/types.js';

/** A reported completion above this many times the request's cap is not a count of this reply (a few over is normal). */
const COMPLETION_OVER_CAP = 10;

/** One token count as a server sent it, under the name the server gave it (for the message). */
interface ReportedCount {
  /** The field as the reply names it, e.g. `usage.completion_tokens`, `eval_count`. */
  field: string;
  /** The value as sent; `undefined` or `null`: the server did not say. */
  value: unknown;
  /** The request's cap on this count (completion tokens only), when one was sent. */
  cap?: number;
}

/** Why a server's token count cannot be used (one line naming the field), or `null`: absent, or a whole number within its cap. */
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

/** Why a part is more than its whole (cached > prompt, reasoning > completion), or `null`. */
export function usagePartProblem(u: Usage): string | null {
  if (u.cached_prompt_tokens != null && u.prompt_tokens !== null && u.cached_prompt_tokens > u.prompt_tokens) {
    return `usage.prompt_tokens_details.cached_tokens ${u.cached_prompt_tokens} is more than usage.prompt_tokens ${u.prompt_tokens}`;
  }
  if (u.reasoning_tokens != null && u.completion_tokens !== null && u.reasoning_tokens > u.completion_tokens) {
    return `usage.completion_tokens_details.reasoning_tokens ${u.reasoning_tokens} is more than usage.completion_tokens ${u.completion_tokens}`;
  }
  return null;
}

/** The `Usage` of an OpenAI `usage` object already checked by {@link usageProblem}; a count not sent is `null`. */
export function openaiUsage(u: unknown): Usage {
  const [prompt, completion, cached, reasoning] = openaiCounts(u, 0).map(({ value }) => (typeof value === 'number' ? value : null));
  const out: Usage = { prompt_tokens: prompt ?? null, completion_tokens: completion ?? null };
  if (cached != null) out.cached_prompt_tokens = cached;
  if (reasoning != null) out.reasoning_tokens = reasoning;
  return out;
}

type OpenaiUsage = {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
  completion_tokens_details?: { reasoning_tokens?: unknown } | null;
};

/** The counts of an OpenAI `usage` object (JSON reply or a stream's usage chunk), for {@link usageProblem}. */
export function openaiCounts(u: unknown, max_tokens: number): ReportedCount[] {
  const o = (u !== null && typeof u === 'object' ? u : {}) as OpenaiUsage;
  return [
    { field: 'usage.prompt_tokens', value: o.prompt_tokens },
    { field: 'usage.completion_tokens', value: o.completion_tokens, cap: max_tokens },
    { field: 'usage.prompt_tokens_details.cached_tokens', value: o.prompt_tokens_details?.cached_tokens },
    { field: 'usage.completion_tokens_details.reasoning_tokens', value: o.completion_tokens_details?.reasoning_tokens, cap: max_tokens },
  ];
}
