/** A deep merge of plain objects; neither argument is modified. */
export function merge(base, override) {
  return Object.assign(base, override);
}
