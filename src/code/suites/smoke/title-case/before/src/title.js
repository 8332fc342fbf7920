/** Every word with its first letter upper-case and the rest lower-case. */
export function titleCase(text) {
  return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
}
