import { main } from '../../src/cli/main.js';
import type { CliResult } from './cli.js';

/**
 * Runs the CLI's own `main` (the entry `bin` calls) in this process with captured output: the same
 * parsing, loading and error boundary as the spawned binary, without ~0.2 s of start-up per call.
 * Only for inputs that fail before a run starts (a run would touch the history and signals).
 */
export async function inProcess(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { out: (s) => void (stdout += s), err: (s) => void (stderr += s), errIsTTY: false }, { ...process.env, NO_COLOR: '1', ...env });
  return { code, stdout, stderr };
}

/** The lines of a stderr text (a trailing newline ends the last one; it does not start another). */
export function linesOf(stderr: string): string[] {
  return stderr.replace(/\n$/, '').split('\n');
}
