import { Command } from 'commander';
import { VERSION } from '../version.js';
import { oneLine } from '../core/one-line.js';
import type { CliIO } from './io.js';

/**
 * Every command, loaded on demand: each lives in its own file under commands/ and pulls in what it
 * needs (zod, the SQLite history, the HTML builder, the coding-agent oracle…), so `joulebench run`
 * does not pay start-up time for `infer` or `code`.
 */
const COMMANDS: Record<string, () => Promise<(io: CliIO) => Command>> = {
  run: async () => (await import('./commands/run.js')).runCommand,
  compare: async () => (await import('./commands/compare.js')).compareCommand,
  meter: async () => (await import('./commands/meter.js')).meterCommand,
  infer: async () => (await import('./commands/infer.js')).inferCommand,
  fetch: async () => (await import('./commands/fetch.js')).fetchCommand,
  report: async () => (await import('./commands/report.js')).reportCommand,
  frontier: async () => (await import('./commands/frontier.js')).frontierCommand,
  history: async () => (await import('./commands/history.js')).historyCommand,
  code: async () => (await import('./commands/code.js')).codeCommand,
  sweep: async () => (await import('./commands/sweep.js')).sweepCommand,
  worker: async () => (await import('./commands/worker.js')).workerCommand,
};

/**
 * Builds the CLI for `argv`: only the command it names is loaded (all of them for help, an unknown
 * command, or no command at all, so usage and errors list every command).
 */
export async function buildProgram(io: CliIO, argv: readonly string[] = []): Promise<Command> {
  const program = new Command('joulebench')
    .description('joules, dollars and milliseconds per correct answer from a language-model system')
    .version(VERSION)
    .exitOverride()
    .configureOutput(outputFor(io));
  const first = argv[0];
  const names = first === '--version' || first === '-V' ? [] : first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
  for (const name of names) {
    const c = (await COMMANDS[name]!())(io);
    c.exitOverride().configureOutput(outputFor(io));
    program.addCommand(c);
  }
  return program;
}

/** commander's output through `io`; its errors as one escaped line with the hint on the same line. */
function outputFor(io: CliIO) {
  return {
    writeOut: (s: string) => io.out(s),
    writeErr: (s: string) => io.err(s),
    outputError: (s: string, write: (s: string) => void) => write(`${oneLine(s.replace(/\n+$/, ''))} (run with --help for usage)\n`),
  };
}
