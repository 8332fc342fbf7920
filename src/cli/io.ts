import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The CLI is the only place that prints; commands write through this so tests can capture it. */
export interface CliIO {
  out(s: string): void;
  err(s: string): void;
  /** Whether stderr is a terminal (progress bars). */
  errIsTTY: boolean;
}

export const processIO: CliIO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  errIsTTY: Boolean(process.stderr.isTTY),
};

/** Writes a file, creating its folder. */
export function writeFileEnsured(path: string, content: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Thrown by a command that ends with a specific exit code (e.g. `meter` passing its command's through). */
export class ExitWith {
  constructor(readonly code: number) {}
}
