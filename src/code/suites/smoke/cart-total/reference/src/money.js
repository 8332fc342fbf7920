/** Dollars to whole cents. */
export function toCents(dollars) {
  return Math.round(dollars * 100);
}
