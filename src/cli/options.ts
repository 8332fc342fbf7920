import { InvalidArgumentError } from 'commander';
import { quote } from '../core/one-line.js';
import { MAX_TIMER_MS, timerLimitText } from '../core/bounds.js';

/** A commander parser for integers >= min (and <= max when given); the message names the option through commander. */
export function intAtLeast(min: number, max?: number, maxText?: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`must be an integer >= ${min}, got ${quote(value)}`);
    }
    if (max !== undefined && n > max) throw new InvalidArgumentError(`${maxText ?? `must be <= ${max}`}, got ${quote(value)}`);
    return n;
  };
}

/** Milliseconds for a timer: an integer from `min` to 2^31−1. */
export function timerMs(min: number): (value: string) => number {
  return intAtLeast(min, MAX_TIMER_MS, timerLimitText('ms'));
}

/** A number >= min (or > min when `exclusive`) and <= max, with a message naming the bound. */
export function numberInRange(min: number, max: number, opts: { exclusive?: boolean; maxText?: string } = {}): (value: string) => number {
  return (value) => {
    const n = Number(value);
    const low = opts.exclusive ? n > min : n >= min;
    if (value.trim() === '' || !Number.isFinite(n) || !low) throw new InvalidArgumentError(`must be a number ${opts.exclusive ? '>' : '>='} ${min}, got ${quote(value)}`);
    if (n > max) throw new InvalidArgumentError(`${opts.maxText ?? `must be <= ${max}`}, got ${quote(value)}`);
    return n;
  };
}

/** A probability strictly between 0 and 1 (`--alpha`, `--power`). */
export function probability(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !(n > 0 && n < 1)) throw new InvalidArgumentError(`must be a number between 0 and 1, got ${quote(v)}`);
  return n;
}

/** `--bootstrap-max-units`: a whole number >= 0, or `inf` (bootstrap at any size). */
export function unitLimit(value: string): number | 'inf' {
  const v = value.trim().toLowerCase();
  if (v === 'inf') return 'inf';
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new InvalidArgumentError(`must be a whole number >= 0 or "inf", got ${quote(value)}`);
  return Number(v);
}

/** The help text of `--bootstrap-max-units`. */
export const UNIT_LIMIT_HELP =
  'bootstrap the intervals over at most this many cases; above it they are large-sample ones (delta method, Woodruff), which cost O(cases) instead of cases × resamples ("inf": bootstrap at any size; 0: never)';
