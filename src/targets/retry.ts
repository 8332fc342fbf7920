import type { z } from 'zod';
import type { retrySchema } from '../config/schema.js';

/** The measured-call retry policy (`params.retry`): total attempts, then waits from `backoff_base_s` capped at `backoff_max_s`, s. */
export type RetryPolicy = z.infer<typeof retrySchema>;

/** The seed's defaults for the two backoff keys. */
export const RETRY_DEFAULTS = { backoff_base_s: 0.2, backoff_max_s: 5.0 } as const;

/** No retry: one attempt (the default, exactly as before the policy existed). */
export const NO_RETRY: RetryPolicy = { max_attempts: 1, ...RETRY_DEFAULTS };

/** The wait after the n-th failure (n >= 1), s: `backoff_base_s × 2^(n−1)`, capped at `backoff_max_s`. */
export function backoffDelay_s(n: number, policy: RetryPolicy): number {
  return Math.min(policy.backoff_max_s, policy.backoff_base_s * 2 ** (n - 1));
}

/** What kind of failure an attempt ended in. */
export type FailureKind = 'http' | 'timeout' | 'connection' | 'malformed' | 'redirect' | 'forbidden' | 'aborted';

/** Whether the seed's policy retries this failure: 429, 5xx, timeouts and connection errors only. */
export function isRetryable(kind: FailureKind, status?: number): boolean {
  if (kind === 'timeout' || kind === 'connection') return true;
  if (kind === 'http' && status !== undefined) return status === 429 || (status >= 500 && status <= 599);
  return false;
}
