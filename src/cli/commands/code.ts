import { basename, dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { DatapointsFile } from '../../code/datapoints-file.js';
import { chooseCodeMeter } from '../../code/energy.js';
import { scrubEnv } from '../../code/env.js';
import type { Datapoint } from '../../code/oracle.js';
import { killLiveGroups } from '../../code/process.js';
import { readCodeResults } from '../../code/results.js';
import { runCodeSuite } from '../../code/run.js';
import { resolveSandbox, SANDBOX_MODES, type SandboxMode } from '../../code/sandbox.js';
import { createSolvers, splitSolverList } from '../../code/solvers/registry.js';
import { BUNDLED_CODE_SUITES, loadCodeSuite } from '../../code/task.js';
import { removeLiveDirs } from '../../code/workdir.js';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { MAX_TIMER_S, timerLimitText } from '../../core/bounds.js';
import { quote } from '../../core/one-line.js';
import { buildReceipt } from '../../report/receipt.js';
import { renderCodeTable } from '../../report/code-table.js';
import { codeHistoryInput } from '../../report/history-inputs.js';
import { writeFileEnsured, type CliIO } from '../io.js';
import { addMeterFlags, idleMsFrom, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';
import { intAtLeast } from '../options.js';
import { recordForCli } from '../load-runs.js';

/** `joulebench code` options as commander parses them. */
export interface CodeFlags extends MeterFlags {
  suite: string;
  solvers: string;
  tasks?: string;
  rollouts: number;
  out?: string;
  report?: string;
  datapoints?: string;
  sandbox: SandboxMode;
  allowWrite: string[];
  timeout?: number;
  keep?: boolean;
  passEnv: string[];
  quiet?: boolean;
  /** False with `--no-history`. */
  history?: boolean;
}

function collect(value: string, prev: string[]): string[] {
  return [...prev, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

function positiveSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new JoulebenchError('E_USAGE', `--timeout: must be a number of seconds > 0, got ${quote(value)}`);
  if (n > MAX_TIMER_S) throw new JoulebenchError('E_USAGE', `--timeout: ${timerLimitText('s')}, got ${quote(value)}`);
  return n;
}

/** `joulebench code`: run a coding suite through the oracle, or `--report` a results file. */
export function codeCommand(io: CliIO): Command {
  const cmd = new Command('code')
    .description('coding agents graded by a test oracle: resolution, joules and dollars per resolved task, and their Pareto frontier')
    .option('-s, --suite <name|dir>', `bundled suite (${BUNDLED_CODE_SUITES.join(', ')}) or a folder of tasks`, 'smoke')
    .option(
      '--solvers <list>',
      'comma-separated: reference, noop, claude, gemini, codex, aider, cmd:<template> ({prompt} {workdir} {task} are substituted, quoted); label=… names one',
      'reference,noop',
    )
    .option('--tasks <list>', 'only these tasks (comma-separated names)')
    .option('-n, --rollouts <n>', 'attempts per task and solver; best-of-N (resolved if any resolves; energy, time and $ summed)', intAtLeast(1), 1)
    .option('-o, --out <file>', 'write the results JSON here (default: stdout, with the table on stderr)')
    .option('--report <file>', 'print the frontier table of a results JSON (or a streamed datapoints JSONL) and exit')
    .option('--datapoints <file>', 'stream each datapoint to this JSONL as it is graded (default: next to --out, or under .joulebench/runs/)')
    .addOption(new Option('--sandbox <mode>', 'bwrap: bubblewrap (root read-only, workdir writable); none: no confinement; auto: bwrap when it works').choices([...SANDBOX_MODES]).default('auto'))
    .option('--allow-write <path>', 'also writable inside the bwrap sandbox (repeatable; e.g. an agent\'s config folder)', collect, [])
    .option('--timeout <s>', "each solver run's limit in seconds (overrides the tasks' timeout_s)", positiveSeconds)
    .option('--keep', 'keep each workdir (paths in the results) instead of removing it')
    .option('--pass-env <names>', 'pass these environment variables to solvers although they look like secrets (comma-separated, repeatable)', collect, [])
    .option('--no-history', 'do not record this run in the history database ($JOULEBENCH_HOME/history.sqlite)')
    .option('-q, --quiet', 'no progress lines and no table');
  // The meters' shared flags; `auto` here takes hardware counters only (else joules are null, see energy.ts).
  return addMeterFlags(cmd).action(async (flags: CodeFlags) => {
    if (flags.report) {
      io.out(renderCodeTable(readCodeResults(flags.report)));
      return;
    }
    await codeAction(flags, io);
  });
}

/** Runs the suite, writes the results JSON and prints the frontier table. */
export async function codeAction(flags: CodeFlags, io: CliIO): Promise<void> {
  const started = new Date();
  const only = flags.tasks?.split(',').map((s) => s.trim()).filter(Boolean);
  const suite = loadCodeSuite(flags.suite, only);
  const solvers = createSolvers(splitSolverList(flags.solvers));
  const sandbox = resolveSandbox(flags.sandbox, { writable: flags.allowWrite });
  const { env, scrubbed } = scrubEnv(process.env, flags.passEnv);
  const chosen = await chooseCodeMeter(flags.meter ?? 'auto', meterOptionsFrom(flags, process.env));
  if (!flags.quiet) {
    io.err(
      `joulebench code · ${suite.tasks.length} tasks × ${solvers.length} solvers × ${flags.rollouts} rollouts · sandbox ${sandbox.kind} · meter ${chosen.meter.id}` +
        (chosen.meter.id === 'none' ? ' (joules null: no hardware energy counter reads here)' : '') +
        '\n',
    );
  }
  const stream = new DatapointsFile(datapointsPath(flags, suite.name, started));
  // Solvers run in their own process groups, so a Ctrl-C at the terminal does not reach them: end
  // them (and remove the workdirs) here before exiting.
  const onSignal = (sig: NodeJS.Signals) => {
    const groups = killLiveGroups();
    const dirs = flags.keep ? 0 : removeLiveDirs();
    io.err(`joulebench: ${sig}: killed ${groups} running solver/test process group(s), removed ${dirs} workdir(s); datapoints so far in ${stream.path}\n`);
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let results;
  try {
    results = await runCodeSuite({
      suite,
      solvers,
      rollouts: flags.rollouts,
      meter: chosen.meter,
      sandbox,
      env,
      scrubbed_env: scrubbed,
      ...(flags.timeout !== undefined ? { timeout_s: flags.timeout } : {}),
      keep: flags.keep ?? false,
      idle_ms: idleMsFrom(flags),
      onStart: (start) => stream.start(start),
      onDatapoint: (d, p) => {
        stream.write(d);
        if (!flags.quiet) io.err(progressLine(d, p));
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await chosen.meter.close?.();
  }
  results.receipt = buildReceipt({
    started,
    finished: new Date(),
    argv: process.argv.slice(2),
    extra: { meter_probe: chosen.probe, meters_tried: chosen.tried },
  });
  const json = prettyJson(results);
  if (flags.out) writeFileEnsured(flags.out, json);
  const runId =
    flags.history !== false
      ? await recordForCli(io, codeHistoryInput(results, { results: flags.out ? resolve(flags.out) : null, datapoints: resolve(stream.path) }))
      : null;
  if (flags.out) {
    if (!flags.quiet) io.out(renderCodeTable(results));
    if (!flags.quiet) io.err(`results    ${flags.out}\ndatapoints ${stream.path}\n${runId !== null ? `history    #${runId}\n` : ''}`);
  } else {
    io.out(json);
    if (!flags.quiet) io.err(renderCodeTable(results) + `datapoints ${stream.path}\n${runId !== null ? `history    #${runId}\n` : ''}`);
  }
  if (results.datapoints.length > 0 && results.datapoints.every((d) => !d.valid)) {
    throw new JoulebenchError('E_RUN', `every datapoint is invalid, nothing was graded (first: ${results.datapoints[0]?.task}: ${results.datapoints[0]?.invalid_reason ?? ''})`);
  }
}

/** The datapoints JSONL: `--datapoints`, else beside `--out`, else under ./.joulebench/runs/. */
function datapointsPath(flags: CodeFlags, suiteName: string, started: Date): string {
  if (flags.datapoints) return flags.datapoints;
  if (flags.out) return join(dirname(flags.out), `${basename(flags.out).replace(/\.json$/i, '')}.datapoints.jsonl`);
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  return join('.joulebench', 'runs', `code-${suiteName.replace(/[^A-Za-z0-9._-]+/g, '_')}-${stamp}.datapoints.jsonl`);
}

function progressLine(d: Datapoint, p: { done: number; total: number }): string {
  const verdict = !d.valid ? `invalid: ${d.invalid_reason}` : d.resolved ? 'resolved' : d.escapes.length > 0 ? 'FAILED: changed files outside its workdir' : 'not resolved';
  const wall = d.solver_run ? ` · ${Math.round(d.solver_run.wall_ms)} ms` : '';
  const extra = [
    d.solver_run?.timed_out ? 'timed out' : '',
    d.tests_modified.length > 0 ? 'edited tests (restored)' : '',
    d.solver_run?.error ? `error: ${d.solver_run.error}` : '',
    d.error ?? '',
  ].filter(Boolean);
  return `[${p.done}/${p.total}] ${d.task} · ${d.solver} #${d.rollout}: ${verdict}${wall}${extra.length ? ` (${extra.join(', ')})` : ''}\n`;
}
