import { CommanderError } from 'commander';
import { isJoulebenchError } from '../core/errors.js';
import { redactQuery } from '../targets/openai/redact.js';
import { ExitWith, processIO, type CliIO } from './io.js';
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
      io.err(`joulebench: ${redactQuery(e.message)}\n`);
      if (process.env.JOULEBENCH_DEBUG) io.err(`${e.stack}\n`);
      return e.exitCode;
    }
    io.err(`joulebench: internal error: ${(e as Error)?.message ?? String(e)}\n${(e as Error)?.stack ?? ''}\n`);
    return 1;
  }
}
