import { checkLevel, type IntervalResult } from './interval.js';
import { twoSidedZ } from './normal.js';

/** Wilson's (1927) score interval for `successes` of `trials`, in [0, 1] (honest at 0 % and 100 %); none under 2 trials. */
export function wilson(successes: number, trials: number, level = 0.95): IntervalResult {
  checkLevel(level);
  if (!Number.isInteger(successes) || !Number.isInteger(trials) || successes < 0 || successes > trials) {
    throw new RangeError(`wilson: need integers 0 ≤ successes ≤ trials, got ${successes} of ${trials}`);
  }
  if (trials < 2) return { reason: `fewer than 2 scored cases (${trials})` };
  const z = twoSidedZ(level);
  const n = trials;
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 and n the bounds are exactly 0 and 1 in exact arithmetic; float noise must not push past them.
  return {
    low: successes === 0 ? 0 : Math.max(0, centre - half),
    high: successes === n ? 1 : Math.min(1, centre + half),
    level,
    method: 'wilson',
  };
}
