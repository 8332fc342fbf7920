import { sampleSd } from './student-t.js';

/** Between-pass spread of one figure over repeated passes (`run --repeat N`). */
export interface Spread {
  /** Passes with a value. */
  n: number;
  mean: number;
  /** Sample standard deviation (n − 1 in the denominator); null for one pass. */
  sd: number | null;
  min: number;
  max: number;
}

/** Mean, sample standard deviation, min and max of the finite values; null when there are none. */
export function spreadOf(values: readonly (number | null)[]): Spread | null {
  const xs = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = xs.length < 2 ? null : sampleSd(xs, mean);
  return { n: xs.length, mean, sd, min: Math.min(...xs), max: Math.max(...xs) };
}
