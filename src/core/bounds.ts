/**
 * The longest delay Node.js timers take, ms (2^31−1, about 24.8 days). A longer one is not an error in
 * Node: it prints a warning and fires after 1 ms, so every duration a user gives is checked against it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** {@link MAX_TIMER_MS} in seconds: 2147483.647. */
export const MAX_TIMER_S = MAX_TIMER_MS / 1000;

/** The message for a duration above the timer limit. */
export function timerLimitText(unit: 'ms' | 's'): string {
  return `must be <= ${unit === 'ms' ? MAX_TIMER_MS : MAX_TIMER_S} (2^31−1 ms, the longest timer Node.js can set)`;
}

/** The largest power a watts coefficient may claim, W: far above any single machine, far below overflow. */
export const MAX_WATTS = 1_000_000;

/** The largest price per million tokens, USD. */
export const MAX_USD_PER_MTOK = 1_000_000;

/**
 * Bounds on the counts a run or a plan takes (docs/sweeps.md "Bounds"): far above any real run, far
 * below what would exhaust memory or run for years. The same for `run` flags, run configs and plan arms.
 */
/** Cases in flight at once. */
export const MAX_CONCURRENCY = 4096;
/** Scored passes over a suite. */
export const MAX_REPEAT = 1_000_000;
/** Warm-up passes over a suite. */
export const MAX_WARMUP = 1000;
/** `--limit` / `params.limit`: cases of a suite. */
export const MAX_CASE_LIMIT = 1_000_000_000;
/** Tokens one answer may generate. */
export const MAX_TOKENS = 1_048_576;
/** Attempts of one measured call (`params.retry.max_attempts`). */
export const MAX_ATTEMPTS = 100;
