import { InvalidArgumentError } from 'commander';

/** A commander parser for integers >= min; the message names the option through commander. */
export function intAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`must be an integer >= ${min}, got "${value}"`);
    }
    return n;
  };
}
