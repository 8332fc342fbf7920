import { CommanderError } from 'commander';
import { isJoulebenchError } from '../core/errors.js';
import { ExitWith, processIO, type CliIO } from './io.js';
import { fsWriteErrorLine } from './output-file.js';
import { buildProgram } from './program.js';

/**
 * The single error boundary: exit 0 on success, 1 on a failed run or gate, 2 on bad usage, config or
 * input (one line naming the file and key). A stack trace is printed only for a bug (JOULEBENCH_DEBUG=1
 * prints it always).
 */
export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  try {
    const program = await buildProgram(io, argv);
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof ExitWith) return e.code;
    if (e instanceof CommanderError) {
      // commander already printed its one-line message; help and version exit 0.
      return e.exitCode === 0 ? 0 : 2;
    }
    if (isJoulebenchError(e)) {
      io.err(`joulebench: ${e.message}\n`);
      if (process.env.JOULEBENCH_DEBUG) io.err(`${e.stack}\n`);
      return e.exitCode;
    }
    // A disk that filled up or turned read-only mid-run is the machine's state, not a bug: one line, exit 2.
    const fsLine = fsWriteErrorLine(e);
    if (fsLine !== null) {
      io.err(`joulebench: ${fsLine}\n`);
      if (process.env.JOULEBENCH_DEBUG) io.err(`${(e as Error).stack}\n`);
      return 2;
    }
    io.err(`joulebench: internal error: ${(e as Error)?.message ?? String(e)}\n${(e as Error)?.stack ?? ''}\n`);
    return 1;
  }
}
