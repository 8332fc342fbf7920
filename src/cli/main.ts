import { CommanderError } from 'commander';
import { isJoulebenchError, JoulebenchError } from '../core/errors.js';
import { oneLine, quote } from '../core/one-line.js';
import { LIMIT_ENV, parseByteSize, setInputLimits, type InputLimits } from '../read-text.js';
import { redactQuery } from '../targets/openai/redact.js';
import { ExitWith, processIO, type CliIO } from './io.js';
import { fsWriteErrorLine } from './output-file.js';
import { buildProgram } from './program.js';

/**
 * The single error boundary: exit 0 on success, 1 on a failed run or gate, 2 on bad usage, config or
 * input; every message one escaped line (docs/errors.md), a stack only for a bug or JOULEBENCH_DEBUG=1.
 */
export async function main(argv: string[], io: CliIO = processIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const previous = setInputLimits({});
  try {
    setInputLimits(limitsFromEnv(env));
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
      io.err(`joulebench: ${oneLine(redactQuery(e.message))}\n`);
      if (env.JOULEBENCH_DEBUG) io.err(`${e.stack}\n`);
      return e.exitCode;
    }
    // A disk that filled up or turned read-only mid-run is the machine's state, not a bug: one line, exit 2.
    const fsLine = fsWriteErrorLine(e);
    if (fsLine !== null) {
      io.err(`joulebench: ${oneLine(fsLine)}\n`);
      if (env.JOULEBENCH_DEBUG) io.err(`${(e as Error).stack}\n`);
      return 2;
    }
    io.err(`joulebench: internal error: ${oneLine((e as Error)?.message ?? String(e))}\n${(e as Error)?.stack ?? ''}\n`);
    return 1;
  } finally {
    setInputLimits(previous);
  }
}

/** `JOULEBENCH_MAX_INPUT_BYTES` / `JOULEBENCH_MAX_CONFIG_BYTES` (bytes, or with KiB/MiB/GiB). */
function limitsFromEnv(env: NodeJS.ProcessEnv): Partial<InputLimits> {
  const out: Partial<InputLimits> = {};
  for (const [key, name] of Object.entries(LIMIT_ENV) as [keyof InputLimits, string][]) {
    const v = env[name];
    if (v === undefined || v.trim() === '') continue;
    const n = parseByteSize(v);
    if (n === null) throw new JoulebenchError('E_USAGE', `environment ${name} must be a size in bytes (e.g. 1048576, 64MiB, 4GiB), got ${quote(v)}`);
    out[key] = n;
  }
  return out;
}
