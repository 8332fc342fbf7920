import type { CaseResult } from '../core/types.js';
import type { LoadRecord } from './metrics.js';
import type { LoadOptions } from './options.js';

// Apart from driver.ts so that a rebuild does not load the runner, the scorers and the schedule.

/** What each request of the schedule recorded, in the results file's `meta.load`. */
export interface LoadMeta {
  request: number;
  /** The turn of its conversation, from 1 (`--think-time-ms`); absent for a single request. */
  turn?: number;
  planned_at_ms: number;
  sent_at_ms: number;
  queue_ms: number;
  lag_ms: number;
  first_token_ms: number | null;
  first_content_ms: number | null;
  e2e_ms: number;
  token_times_ms: number[];
  content_chunks: number;
  reasoning_chunks: number;
  /** The prompt's tokens by the dataset's tokenizer, when it has one. */
  tokenizer_tokens?: number;
}

/** The per-request figures the serving metrics need, from a scored result and its load meta. */
export function loadRecordOf(r: CaseResult, m: LoadMeta, ttft_token: LoadOptions['ttft_token']): LoadRecord {
  const usage = r.completion_tokens;
  const chunks = m.content_chunks + m.reasoning_chunks;
  return {
    ok: r.error === null,
    passed: r.passed,
    planned_at_ms: m.planned_at_ms,
    sent_at_ms: m.sent_at_ms,
    queue_ms: m.queue_ms,
    lag_ms: m.lag_ms,
    ttft_ms: ttft_token === 'any' ? m.first_token_ms : m.first_content_ms,
    e2e_ms: m.e2e_ms,
    token_times_ms: m.token_times_ms,
    output_tokens: usage ?? (chunks > 0 ? chunks : null),
    output_tokens_from: usage !== null ? 'usage' : chunks > 0 ? 'chunks' : 'none',
    prompt_tokens: r.prompt_tokens,
    ...(m.tokenizer_tokens !== undefined ? { tokenizer_tokens: m.tokenizer_tokens } : {}),
  };
}
