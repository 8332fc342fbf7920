import picocolors from 'picocolors';

type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * The colours every renderer uses. The CLI always emits codes and strips them per stream (src/cli/color.ts):
 * picocolors decides by stdout alone, and tables go to stderr as often.
 */
export let pc: Colors = picocolors;

/** Emit colour codes (true) or none (false) from every renderer from now on. */
export function emitColors(on: boolean): void {
  pc = picocolors.createColors(on);
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;

/** `s` without colour codes. */
export function stripColors(s: string): string {
  return s.replace(ANSI, '');
}
