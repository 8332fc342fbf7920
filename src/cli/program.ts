import type { Command } from 'commander';
import { VERSION } from '../version.js';
import { oneLine } from '../core/one-line.js';
import type { CliIO } from './io.js';

/** The program's one-line description (also printed by the quick `--help`, src/cli/quick.ts). */
export const PROGRAM_DESCRIPTION = 'joules, dollars and milliseconds per correct answer from a language-model system';

/** One command: its usage term and summary (as `--help` lists them) and its implementation, loaded on demand. */
interface CommandEntry {
  term: string;
  summary: string;
  load: () => Promise<(io: CliIO) => Command>;
}

/** Every command's term and summary; its implementation is `<name>Command` in commands/<name>.ts. */
const TERMS: Record<string, Omit<CommandEntry, 'load'>> = {
  run: {
    term: 'run [options]',
    summary: 'run a suite against a target and report accuracy, joules per correct answer, latency and stage mix',
  },
  compare: {
    term: 'compare [options] [runs...]',
    summary: 'compare two runs: J/correct, $/correct, total $ and p95 latency as % change, accuracy as a point difference, each with its paired interval and verdict',
  },
  meter: {
    term: 'meter [options] <command...>',
    summary: 'run any command under an energy meter and print wall time, CPU time, gross and net joules per domain (exit code passes through)',
  },
  infer: {
    term: 'infer [options]',
    summary: 'local inference under the local-inference counting rules (Ollama, llama.cpp): cold runs, warmup, scored runs, thread sweep, receipts',
  },
  fetch: {
    term: 'fetch [options] <dataset> [name]',
    summary:
      "download a public dataset (mmlu: cais/mmlu as JSONL, for --suite mmlu --data; mt-bench: FastChat's question.jsonl, reference answers and judge prompts at a pinned commit, sha256-checked; swebench-verified: the Verified split as Parquet, for joulebench code --suite) or a GGUF model (model [NAME]: a pinned, sha256-checked file into $JOULEBENCH_HOME/models/default.gguf, the embedded default's neural stage)",
  },
  report: {
    term: 'report [options] <runs...>',
    summary: 'show one or more runs: a terminal table, Markdown for a PR (--md), or one self-contained HTML page (--html)',
  },
  frontier: {
    term: 'frontier [options] <runs...>',
    summary: 'the Pareto-optimal arms for accuracy vs J/correct, $/correct and p95 latency (suite runs; code solvers; infer arms are listed as not placed)',
  },
  power: {
    term: 'power [options] <results> [candidate]',
    summary: 'plan a paired comparison from a pilot run: the cases needed to detect an accuracy and an energy difference, and their time and joules',
  },
  history: {
    term: 'history [options]',
    summary: 'list recorded runs, newest first ($JOULEBENCH_HOME/history.sqlite, default ~/.joulebench)',
  },
  view: {
    term: 'view [options] [paths...]',
    summary: 'browse the history and named results, reports and sweep folders in a local read-only web viewer: runs, transcripts, compare, trends',
  },
  code: {
    term: 'code [options]',
    summary: 'coding agents graded by a test oracle: resolution, joules and dollars per resolved task, and their Pareto frontier',
  },
  rescore: {
    term: 'rescore [options] [results]',
    summary: "score a results file with an LLM judge (MT-Bench [[rating]]; cached judgements are not asked again) into a new results file (--in-place: over it), or with --judgments summarise FastChat's published judgments per model",
  },
  sweep: {
    term: 'sweep [options] [plan]',
    summary: 'run every arm of a plan (arms × suites, each an ordinary run) and compare them with intervals, a frontier and significance against a baseline',
  },
  setup: {
    term: 'setup [options] <part>',
    summary: "add what an optional part needs (llamacpp: node-llama-cpp's prebuilt llama.cpp for this platform, or with --gpu its CUDA or Vulkan build)",
  },
  worker: {
    term: 'worker [options]',
    summary: 'run sweep arms from a queue (BullMQ on Redis) on this machine, with its own meters, until stopped',
  },
};

/** Every command, loaded only when named, so one command's start-up never pays for another's imports. */
export const COMMANDS: Record<string, CommandEntry> = Object.fromEntries(
  Object.entries(TERMS).map(([name, entry]) => [name, { ...entry, load: async () => (await import(`./commands/${name}.js`))[`${name}Command`] }]),
);

/** Builds the CLI for `argv`: the command it names is loaded, every other one is a stub from COMMANDS (listed, never run). */
export async function buildProgram(io: CliIO, argv: readonly string[] = []): Promise<Command> {
  const { Command, Help } = await import('commander');
  const program = new Command('joulebench')
    .description(PROGRAM_DESCRIPTION)
    .version(VERSION)
    .exitOverride()
    .configureOutput(outputFor(io))
    .configureHelp({ subcommandTerm: (c) => (Object.hasOwn(COMMANDS, c.name()) ? COMMANDS[c.name()]!.term : Help.prototype.subcommandTerm(c)) });
  const named = argv[0] === 'help' ? argv[1] : argv[0];
  const only = named !== undefined && Object.hasOwn(COMMANDS, named) ? named : undefined;
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (name === only) {
      const c = (await entry.load())(io);
      c.exitOverride().configureOutput(outputFor(io));
      program.addCommand(c);
    } else {
      program.addCommand(new Command(name).description(entry.summary).exitOverride().configureOutput(outputFor(io)));
    }
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
