/** The longest a value quoted in a message may be, characters, before it is cut with an ellipsis. */
export const QUOTE_MAX_CHARS = 200;

/** The longest one error line may be, characters (after escaping), before it is cut with an ellipsis. */
const LINE_MAX_CHARS = 1000;

// C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators: each could end the line
// or drive the terminal (ESC [ … rewrites what is on screen; U+009B is a one-character CSI).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Replaces every control character with a visible escape (`\n`, `\r`, `\t`, `\x1b`, `\x00`, `\u2028`). */
export function escapeControls(s: string): string {
  return s.replace(CONTROL, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Cuts `s` to at most `max` characters, the last one an ellipsis, never splitting a surrogate pair. */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = Math.max(0, max - 1);
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${s.slice(0, end)}…`;
}

/** A value for a message: escaped, cut to {@link QUOTE_MAX_CHARS}, in double quotes. */
export function quote(value: unknown, max = QUOTE_MAX_CHARS): string {
  return `"${cut(escapeControls(String(value)), max)}"`;
}

/** One line for a person: every control escaped, cut to {@link LINE_MAX_CHARS}. */
export function oneLine(message: string, max = LINE_MAX_CHARS): string {
  return cut(escapeControls(message), max);
}
