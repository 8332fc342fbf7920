import type { LoadRecord } from '../../src/load/metrics.js';

/** A completed request's record: 10 output tokens, TTFT 10 ms, E2E 100 ms, sent at 0; `p` overrides. */
export function rec(p: Partial<LoadRecord>): LoadRecord {
  return {
    ok: true,
    passed: true,
    planned_at_ms: 0,
    sent_at_ms: 0,
    queue_ms: 0,
    lag_ms: 0,
    ttft_ms: 10,
    e2e_ms: 100,
    token_times_ms: [],
    output_tokens: 10,
    output_tokens_from: 'usage',
    prompt_tokens: 5,
    ...p,
  };
}
