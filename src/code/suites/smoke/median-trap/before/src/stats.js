/** The median of a list of numbers (the mean of the middle two for an even count). */
export function median(values) {
  const mid = Math.floor(values.length / 2);
  return values.length % 2 === 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}
