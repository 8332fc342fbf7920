import { Command } from 'commander';
import { VERSION } from '../version.js';
import { codeCommand } from './commands/code.js';
import { compareCommand } from './commands/compare.js';
import { frontierCommand } from './commands/frontier.js';
import { historyCommand } from './commands/history.js';
import { inferCommand } from './commands/infer.js';
import { fetchCommand } from './commands/fetch.js';
import { meterCommand } from './commands/meter.js';
import { reportCommand } from './commands/report.js';
import { runCommand } from './commands/run.js';
import type { CliIO } from './io.js';

/** Builds the CLI. Each command lives in its own file under commands/ and is added here. */
export function buildProgram(io: CliIO): Command {
  const program = new Command('joulebench')
    .description('joules, dollars and milliseconds per correct answer from a language-model system')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
  const commands = [
    runCommand(io),
    compareCommand(io),
    meterCommand(io),
    inferCommand(io),
    fetchCommand(io),
    reportCommand(io),
    frontierCommand(io),
    historyCommand(io),
    codeCommand(io),
  ];
  for (const c of commands) {
    c.exitOverride().configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) });
    program.addCommand(c);
  }
  return program;
}
