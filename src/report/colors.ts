import picocolors from 'picocolors';

type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * The colours every renderer uses. A library caller gets picocolors' own choice; the CLI switches to
 * always emitting codes and strips them per stream (`src/cli/color.ts`), because a table is written to
 * stderr as often as to stdout and picocolors decides by stdout alone.
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
