/** Dollars to whole cents. */
export function toCents(dollars) {
  return Math.floor(dollars * 100);
}
