/** `fn()`, or `fallback` when it throws: reading what may be gone or unreadable (a process, a file, a link). */
export function attempt<T, F>(fn: () => T, fallback: F): T | F {
  try {
    return fn();
  } catch {
    return fallback;
  }
}
