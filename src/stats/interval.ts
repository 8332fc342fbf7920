import { round } from '../core/stats.js';

/** How an interval was computed (docs/statistics.md); `delta` and `woodruff` are large-sample.ts's. */
export type IntervalMethod = 'wilson' | 'bootstrap' | 'paired-bootstrap' | 'mcnemar-exact' | 'delta' | 'woodruff' | 'paired-delta' | 'paired-woodruff' | 'student-t' | 'paired-t' | 'degenerate';

/** A two-sided confidence interval: `level` is its nominal coverage (0.95 for a 95 % interval). */
export interface Interval {
  low: number;
  high: number;
  level: number;
  method: IntervalMethod;
}

/** Why no interval could be computed (too few cases, unknown energy, an unbounded resample…). */
export interface NoInterval {
  reason: string;
}

export type IntervalResult = Interval | NoInterval;

/** An interval with nothing to vary (`pointMass`) states no coverage: its method becomes `degenerate`. */
export function labelDegenerate(i: Interval, pointMass: boolean): Interval {
  return pointMass ? { ...i, method: 'degenerate' } : i;
}

/** How an interval is named where it is printed: `95 %`, or `degenerate`. */
export function intervalLabel(i: Pick<Interval, 'level' | 'method'>): string {
  return i.method === 'degenerate' ? 'degenerate' : `${Math.round(i.level * 100)} %`;
}

export function isInterval(r: IntervalResult): r is Interval {
  return (r as Interval).method !== undefined;
}

/** Checks a confidence level: a number strictly between 0 and 1. */
export function checkLevel(level: number): number {
  if (!(level > 0 && level < 1)) throw new RangeError(`confidence level must be in (0, 1), got ${level}`);
  return level;
}

/** The interval with both ends rounded to `digits` decimals (reports are byte-compared). */
export function roundInterval(i: Interval, digits: number): Interval {
  return { low: round(i.low, digits), high: round(i.high, digits), level: i.level, method: i.method };
}
