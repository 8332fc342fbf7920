import { stripColors } from '../report/colors.js';
import { colorFor } from './color.js';

/** The CLI is the only place that prints; commands write through this so tests can capture it. */
export interface CliIO {
  out(s: string): void;
  err(s: string): void;
  /** Whether stderr is a terminal (progress bars). */
  errIsTTY: boolean;
}

/** stdout and stderr, each with colour only when that stream should get it (see color.ts). */
export const processIO: CliIO = {
  out: (s) => process.stdout.write(colorFor(process.stdout, process.env) ? s : stripColors(s)),
  err: (s) => process.stderr.write(colorFor(process.stderr, process.env) ? s : stripColors(s)),
  errIsTTY: Boolean(process.stderr.isTTY),
};

/** Thrown by a command that ends with a specific exit code (e.g. `meter` passing its command's through). */
export class ExitWith {
  constructor(readonly code: number) {}
}
