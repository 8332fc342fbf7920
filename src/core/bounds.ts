/**
 * The longest delay Node.js timers take, ms (2^31−1, about 24.8 days). A longer one is not an error in
 * Node: it prints a warning and fires after 1 ms, so every duration a user gives is checked against it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** {@link MAX_TIMER_MS} in seconds: 2147483.647. */
export const MAX_TIMER_S = MAX_TIMER_MS / 1000;

/** The message for a duration above the timer limit. */
export function timerLimitText(unit: 'ms' | 's'): string {
  return unit === 'ms' ? `must be <= ${MAX_TIMER_MS} (2^31−1 ms, the longest timer Node.js can set)` : `must be <= ${MAX_TIMER_S} (2^31−1 ms, the longest timer Node.js can set)`;
}

/** The largest power a watts coefficient may claim, W: far above any single machine, far below overflow. */
export const MAX_WATTS = 1_000_000;

/** The largest price per million tokens, USD. */
export const MAX_USD_PER_MTOK = 1_000_000;
