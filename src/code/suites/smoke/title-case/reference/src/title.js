/** Every word with its first letter upper-case and the rest lower-case. */
export function titleCase(text) {
  return text
    .split(' ')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join(' ');
}
