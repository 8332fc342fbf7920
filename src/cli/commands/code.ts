import { dirname, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { DatapointsFile } from '../../code/datapoints-file.js';
import { chooseCodeMeter } from '../../code/energy.js';
import { scrubEnv } from '../../code/env.js';
import type { Datapoint } from '../../code/oracle.js';
import { killLiveGroups } from '../../code/process.js';
import { readCodeResults, type CodeResults } from '../../code/results.js';
import { PREFLIGHT_INVALID, runCodeSuite } from '../../code/run.js';
import { DEFAULT_MAX_PROCS, DEFAULT_MEMORY_MB, resolveSandbox, SANDBOX_MODES, type SandboxMode } from '../../code/sandbox.js';
import { createSolvers, splitSolverList } from '../../code/solvers/registry.js';
import { BUNDLED_CODE_SUITES, loadCodeSuite, type CodeSuite } from '../../code/task.js';
import { dockerProblem, isSwebenchFile, loadSwebenchSuite, swebenchArch } from '../../code/swebench.js';
import { removeLiveContainers } from '../../code/docker-cli.js';
import { dockerRunner, IMAGE_UNAVAILABLE, type ContainerTests } from '../../code/docker-runner.js';
import { machine } from 'node:os';
import { removeLiveDirs } from '../../code/workdir.js';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { MAX_TIMER_S, timerLimitText } from '../../core/bounds.js';
import { quote } from '../../core/one-line.js';
import { buildReceipt } from '../../report/receipt.js';
import { renderCodeTable } from '../../report/code-table.js';
import { codeHistoryInput } from '../../report/history-inputs.js';
import type { CliIO } from '../io.js';
import { ALL_FORMATS, planOutput, sideFileBase, writeByExtension, type Renderings } from '../outputs.js';
import { checkOutputPath, writeOutputFile } from '../output-file.js';
import { PowerTrace } from '../../meters/power-trace.js';
import { addMeterFlags, idleMsFrom, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';
import { intAtLeast, numberInRange } from '../options.js';
import { summarizeResults } from '../../code/aggregate.js';
import { localPrices } from '../../core/usd-parts.js';
import { addPriceFlags, pricesOfFlags, type PriceFlags } from '../price-flags.js';
import { recordForCli } from '../load-runs.js';
import { describeSelection, selectItems } from '../../suites/select.js';

/** `joulebench code` options as commander parses them. */
interface CodeFlags extends MeterFlags, PriceFlags {
  suite: string;
  solvers: string;
  tasks?: string;
  filter?: string;
  limit?: number;
  rollouts: number;
  out?: string;
  report?: string;
  datapoints?: string;
  sandbox: SandboxMode;
  allowWrite: string[];
  allowRead: string[];
  timeout?: number;
  keep?: boolean;
  passEnv: string[];
  quiet?: boolean;
  json?: boolean;
  /** False with `--no-history`. */
  history?: boolean;
  memoryMb: number;
  maxProcs: number;
  cacheDir?: string;
  repos?: string;
  testCmd?: string;
  runner: 'local' | 'docker';
  /** SWE-bench image namespace (`none`: locally built images). */
  namespace: string;
  imageTag: string;
  pull?: boolean;
  testTimeout?: number;
  energyBudget?: number;
  pue?: number;
  powerTrace?: string;
}

function collect(value: string, prev: string[]): string[] {
  return [...prev, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** A seconds parser for `flag`, whose errors name that flag. */
const positiveSeconds = (flag: string) => (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new JoulebenchError('E_USAGE', `${flag}: must be a number of seconds > 0, got ${quote(value)}`);
  if (n > MAX_TIMER_S) throw new JoulebenchError('E_USAGE', `${flag}: ${timerLimitText('s')}, got ${quote(value)}`);
  return n;
};

/** `joulebench code`: run a coding suite through the oracle, or `--report` a results file. */
export function codeCommand(io: CliIO): Command {
  const cmd = new Command('code')
    .description('coding agents graded by a test oracle: resolution, joules and dollars per resolved task, and their Pareto frontier')
    .option('-s, --suite <name|dir>', `bundled suite (${BUNDLED_CODE_SUITES.join(', ')}) or a folder of tasks`, 'smoke')
    .option(
      '--solvers <list>',
      'comma-separated: reference, noop, claude, gemini, codex, aider, cmd:<template> ({prompt} {workdir} {task} are substituted, quoted), cascade:<solver> (a fix cache in front of it); label=… names one',
      'reference,noop',
    )
    .option('--cache-dir <dir>', 'the cascade: solvers\' fix cache (default $JOULEBENCH_HOME/code-cache)')
    .option('--repos <dir>', 'SWE-bench instances (--suite X.jsonl|.json|.parquet): folder of git mirrors, <owner>__<name>/ or <owner>/<name>/')
    .option('--test-cmd <cmd>', 'SWE-bench instances: the test command; {test} is each FAIL_TO_PASS / PASS_TO_PASS name (e.g. "python -m pytest {test}")')
    .addOption(new Option('--runner <kind>', 'SWE-bench instances: where the tests run: local (the sandbox here) or docker (SWE-bench\'s per-instance images, one confined container per baseline and grade; the solver stays in the local sandbox)').choices(['local', 'docker']).default('local'))
    .option('--namespace <ns>', 'SWE-bench --runner docker: image namespace, as SWE-bench\'s harness names images (<ns>/sweb.eval.<arch>.<id>:<tag>); none: locally built images', 'swebench')
    .option('--image-tag <tag>', 'SWE-bench --runner docker: instance image tag', 'latest')
    .option('--pull', 'SWE-bench --runner docker: pull an instance image that is not present (needs a network; otherwise its datapoints are invalid)')
    .option('--test-timeout <s>', 'SWE-bench instances: limit of each test run, seconds (default 300)', positiveSeconds('--test-timeout'))
    .option('--tasks <list>', 'only these tasks (comma-separated names)')
    .option('--filter <regex>', 'only tasks whose name matches (recorded in the suite digest)')
    .option('--limit <n>', 'only the first N tasks, after --tasks and --filter (recorded in the suite digest)', intAtLeast(1))
    .option('-n, --rollouts <n>', 'attempts per task and solver; best-of-N (resolved if any resolves; energy, time and $ summed)', intAtLeast(1), 1)
    .option('-o, --out <file>', 'write the results here; the extension picks the format: .json (readable by report/--report), .md, .html, .csv (per datapoint), .jsonl (per datapoint), .txt (default: JSON on stdout)')
    .option('--report <file>', 'print the frontier table of a results JSON (or a streamed datapoints JSONL) and exit')
    .option('--datapoints <file>', 'stream each datapoint to this JSONL as it is graded (default: next to --out, or under .joulebench/runs/)')
    .addOption(new Option('--sandbox <mode>', 'bwrap: bubblewrap (root read-only, workdir writable); none: no confinement; auto: bwrap when it works').choices([...SANDBOX_MODES]).default('auto'))
    .option('--memory-mb <n>', 'memory limit of each solver and test run, MiB; a run over it is stopped and its datapoint invalid (--runner docker: each container\'s --memory)', intAtLeast(1), DEFAULT_MEMORY_MB)
    .option('--max-procs <n>', 'processes (threads count) the sandboxed solver may hold at once (bwrap); with --runner docker also each container\'s --pids-limit', intAtLeast(1), DEFAULT_MAX_PROCS)
    .option('--allow-write <path>', 'also writable inside the bwrap sandbox (repeatable; e.g. an agent\'s config folder)', collect, [])
    .option('--allow-read <path>', 'also readable inside the bwrap sandbox, at its own path (repeatable; e.g. a folder under /tmp an agent or test interpreter needs)', collect, [])
    .option('--timeout <s>', "each solver run's limit in seconds (overrides the tasks' timeout_s)", positiveSeconds('--timeout'))
    .option('--keep', 'keep each workdir (paths in the results) instead of removing it')
    .option('--pass-env <names>', 'pass these environment variables to solvers although they look like secrets (comma-separated, repeatable)', collect, [])
    .option('--no-history', 'do not record this run in the history database ($JOULEBENCH_HOME/history.sqlite)')
    .option('-q, --quiet', 'no progress lines and no table')
    .option('--json', 'with --report: print the results JSON (aggregates recomputed) instead of the table')
    .option('--energy-budget <J>', 'energy budget per task attempt, J: adds resolution under the budget (area under resolved-vs-joules up to it, ÷ it; docs/statistics.md); recorded in the results, and with --report applied to them', numberInRange(0, Number.MAX_VALUE, { exclusive: true }))
    .option('--pue <x>', "the facility's power usage effectiveness: adds a modelled facility layer to each solver's row, (PUE − 1) × the measured energy, never summed into a measured figure; with --report applied to the results", numberInRange(1, 100))
    .option('--power-trace <file.csv>', 'write the power time series (t_utc, phase: idle, then scored from the preflight to the last datapoint graded, watts per domain) here; also embedded, downsampled, in the results; needs a hardware meter');
  // The meters' shared flags; `auto` here takes hardware counters only (else joules are null, see energy.ts).
  return addPriceFlags(addMeterFlags(cmd)).action(async (flags: CodeFlags) => {
    if (flags.report) {
      if (flags.powerTrace !== undefined) throw new JoulebenchError('E_USAGE', '--power-trace applies to a run, not to --report');
      const results = readCodeResults(flags.report);
      const prices = localPrices(pricesOfFlags(flags), results.config.prices);
      if (flags.energyBudget !== undefined || prices || flags.pue !== undefined) {
        if (flags.energyBudget !== undefined) results.config.energy_budget_j = flags.energyBudget;
        if (flags.pue !== undefined) results.config.pue = flags.pue;
        if (prices) results.config.prices = prices;
        results.solvers = summarizeResults(results);
      }
      if (flags.out) await writeByExtension(flags.out, codeRenderings(results, flags.report));
      else io.out(flags.json ? prettyJson(results) : renderCodeTable(results));
      return;
    }
    await codeAction(flags, io);
  });
}

/** Runs the suite, writes the results JSON and prints the frontier table. */
async function codeAction(flags: CodeFlags, io: CliIO): Promise<void> {
  const started = new Date();
  const outPlan = flags.out ? planOutput(flags.out, ALL_FORMATS) : null;
  const only = flags.tasks?.split(',').map((s) => s.trim()).filter(Boolean);
  const suite = await selectCodeTasks(await loadSuite(flags, only), flags);
  const container = containerTestsFrom(flags);
  const solvers = createSolvers(splitSolverList(flags.solvers), flags.cacheDir ? { cache_dir: flags.cacheDir } : {});
  const sandbox = resolveSandbox(flags.sandbox, { writable: flags.allowWrite, allow_read: flags.allowRead.map((p) => resolve(p)), max_procs: flags.maxProcs });
  if (flags.sandbox === 'auto' && sandbox.kind === 'none') {
    // Said on the terminal even with -q: the results file alone is too easy to miss.
    io.err(`joulebench: warning: running solvers WITHOUT a sandbox (${String(sandbox.describe().bwrap_unavailable ?? 'bwrap unavailable')}); see docs/safety.md\n`);
  }
  const { env, scrubbed } = scrubEnv(process.env, flags.passEnv);
  if (flags.powerTrace !== undefined) checkOutputPath(flags.powerTrace, '--power-trace');
  const chosen = await chooseCodeMeter(flags.meter ?? 'auto', meterOptionsFrom(flags, process.env));
  if (flags.powerTrace !== undefined && (chosen.meter.id === 'none' || chosen.meter.source === 'estimate')) {
    await chosen.meter.close?.();
    throw new JoulebenchError('E_USAGE', `--power-trace: meter ${chosen.meter.id} reads no hardware; choose --meter rapl, nvml, amdsmi or one that reads here`);
  }
  const trace = flags.powerTrace !== undefined ? new PowerTrace(chosen.meter) : null;
  if (!flags.quiet) {
    io.err(
      `joulebench code · ${suite.tasks.length} tasks × ${solvers.length} solvers × ${flags.rollouts} rollouts · sandbox ${sandbox.kind}${container ? ' · tests in docker' : ''} · meter ${chosen.meter.id}` +
        (chosen.meter.id === 'none' ? ' (joules null: no hardware energy counter reads here)' : '') +
        '\n',
    );
  }
  const dpPath = datapointsPath(flags, suite.name, started, outPlan?.regular ?? true);
  checkOutputPath(dpPath, '--datapoints');
  if (flags.out && outPlan && !outPlan.regular && !flags.datapoints) {
    io.err(`joulebench: ${flags.out} is not a regular file, so nothing is written beside it: datapoints go to ${dirname(dpPath)}/\n`);
  }
  const stream = new DatapointsFile(dpPath);
  // Solvers run in their own process groups, so a Ctrl-C at the terminal does not reach them: end
  // them (and remove the workdirs) here before exiting.
  const onSignal = (sig: NodeJS.Signals) => {
    const groups = killLiveGroups();
    const containers = removeLiveContainers();
    const dirs = flags.keep ? 0 : removeLiveDirs();
    io.err(`joulebench: ${sig}: killed ${groups} running solver/test process group(s)${containers ? `, removed ${containers} container(s)` : ''}, removed ${dirs} workdir(s); datapoints so far in ${stream.path}\n`);
    process.exit(sig === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const unavailableSaid = new Set<string>();
  const imagesSaid = new Set<string>();
  let results;
  try {
    results = await runCodeSuite({
      suite,
      solvers,
      rollouts: flags.rollouts,
      ...(flags.energyBudget !== undefined ? { energy_budget_j: flags.energyBudget } : {}),
      ...(pricesOfFlags(flags) ? { prices: pricesOfFlags(flags)! } : {}),
      meter: chosen.meter,
      sandbox,
      env,
      scrubbed_env: scrubbed,
      ...(flags.timeout !== undefined ? { timeout_s: flags.timeout } : {}),
      keep: flags.keep ?? false,
      memory_mb: flags.memoryMb,
      ...(container ? { container } : {}),
      idle_ms: idleMsFrom(flags),
      ...(flags.pue !== undefined ? { pue: flags.pue } : {}),
      ...(trace ? { trace } : {}),
      // Each problem is one line, even with -q: every datapoint it rules out would say the same.
      onPreflight: (problems) => {
        for (const p of problems) io.err(`joulebench: preflight: ${p.scope} ${p.name}: ${p.reason} — its datapoints are invalid, not 0 %\n`);
      },
      onStart: (start) => stream.start(start),
      onDatapoint: (d, p) => {
        stream.write(d);
        // A missing agent is said once, even with -q: every later datapoint of it would say the same.
        if (!d.valid && d.invalid_reason?.startsWith(UNAVAILABLE) && !unavailableSaid.has(d.solver)) {
          unavailableSaid.add(d.solver);
          io.err(`joulebench: ${d.solver}: ${d.invalid_reason} — its datapoints are invalid, not 0 %\n`);
        }
        if (!d.valid && d.image && d.invalid_reason?.startsWith(IMAGE_UNAVAILABLE) && !imagesSaid.has(d.image)) {
          imagesSaid.add(d.image);
          io.err(`joulebench: ${d.task}: ${d.invalid_reason} — its datapoints are invalid, not 0 %\n`);
        }
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
  if (trace && flags.powerTrace !== undefined) writeOutputFile(flags.powerTrace, trace.csv(), '--power-trace');
  const json = prettyJson(results);
  const format = flags.out ? await writeByExtension(flags.out, codeRenderings(results, suite.name, json)) : null;
  const runId =
    flags.history !== false
      ? await recordForCli(io, codeHistoryInput(results, { results: flags.out && format === 'json' && outPlan?.regular ? resolve(flags.out) : null, datapoints: resolve(stream.path) }))
      : null;
  // With -o the table goes to stdout and stderr names the file; else the JSON to stdout and the table to stderr.
  if (!flags.out) io.out(json);
  else if (!flags.quiet) io.out(renderCodeTable(results));
  const history = runId !== null ? `history    #${runId}\n` : '';
  if (!flags.quiet) io.err(`${flags.out ? `results    ${flags.out}\n` : renderCodeTable(results)}datapoints ${stream.path}\n${history}`);
  const missing = results.solvers.filter((s) => {
    const dps = results.datapoints.filter((d) => d.solver === s.solver);
    return dps.length > 0 && dps.every((d) => !d.valid && d.invalid_reason?.startsWith(UNAVAILABLE));
  });
  if (missing.length > 0) {
    throw new JoulebenchError('E_USAGE', `${missing.map((s) => s.solver).join(', ')}: not available here, every datapoint invalid (results written)`);
  }
  if (results.datapoints.length > 0 && results.datapoints.every((d) => !d.valid && d.invalid_reason?.startsWith(IMAGE_UNAVAILABLE))) {
    throw new JoulebenchError('E_CONFIG', `--runner docker: no instance's image is present, every datapoint invalid (results written; first: ${results.datapoints[0]?.image ?? '?'})`);
  }
  if (results.datapoints.length > 0 && results.datapoints.every((d) => !d.valid && d.invalid_reason?.startsWith(PREFLIGHT_INVALID))) {
    throw new JoulebenchError('E_CONFIG', `preflight: nothing can run inside the sandbox here, every datapoint invalid (results written; first: ${results.datapoints[0]?.invalid_reason?.slice(PREFLIGHT_INVALID.length) ?? ''})`);
  }
  if (results.datapoints.length > 0 && results.datapoints.every((d) => !d.valid)) {
    throw new JoulebenchError('E_RUN', `every datapoint is invalid, nothing was graded (first: ${results.datapoints[0]?.task}: ${results.datapoints[0]?.invalid_reason ?? ''})`);
  }
}

/** `--filter`/`--limit`: the suite loaded again with the chosen names, so its digest covers the tasks run. */
async function selectCodeTasks(suite: CodeSuite, flags: CodeFlags): Promise<CodeSuite> {
  if (flags.filter === undefined && flags.limit === undefined) return suite;
  const sel = { ...(flags.filter !== undefined ? { filter: flags.filter } : {}), ...(flags.limit !== undefined ? { limit: flags.limit } : {}) };
  const chosen = selectItems(suite.tasks, sel, (t) => [t.name]);
  if (chosen.length === 0) throw new JoulebenchError('E_USAGE', `--filter/--limit (${describeSelection(sel)}) selected no task of suite ${suite.name} (${suite.tasks.length} tasks)`);
  return loadSuite(flags, chosen.map((t) => t.name));
}

/** A bundled suite or task folder, or a SWE-bench instances file. */
async function loadSuite(flags: CodeFlags, only: string[] | undefined): Promise<CodeSuite> {
  if (!isSwebenchFile(flags.suite)) {
    if (flags.repos || flags.testCmd) throw new JoulebenchError('E_USAGE', '--repos and --test-cmd apply to SWE-bench instances (--suite FILE.jsonl, .json or .parquet)');
    if (flags.runner === 'docker') throw new JoulebenchError('E_USAGE', '--runner docker applies to SWE-bench instances (--suite FILE.jsonl, .json or .parquet), whose images hold their environments');
    if (flags.testTimeout !== undefined) throw new JoulebenchError('E_USAGE', "--test-timeout applies to SWE-bench instances; a task folder sets test_timeout_s in its task.toml");
    return loadCodeSuite(flags.suite, only);
  }
  if (!flags.repos) throw new JoulebenchError('E_USAGE', `--suite ${flags.suite}: SWE-bench instances need --repos DIR (local git mirrors of their repositories)`);
  if (!flags.testCmd) throw new JoulebenchError('E_USAGE', `--suite ${flags.suite}: SWE-bench instances need --test-cmd (e.g. "python -m pytest {test}")`);
  if (flags.pull && flags.runner !== 'docker') throw new JoulebenchError('E_USAGE', '--pull applies to --runner docker (it pulls SWE-bench instance images)');
  if (flags.runner === 'docker') {
    const why = dockerProblem(dockerBin());
    if (why) throw new JoulebenchError('E_CONFIG', `--runner docker: ${why}; use --runner local`);
  }
  const testTimeout = flags.testTimeout !== undefined ? { test_timeout_s: flags.testTimeout } : {};
  return loadSwebenchSuite(flags.suite, { repos_dir: flags.repos, test_cmd: flags.testCmd, ...(only ? { only } : {}), ...testTimeout });
}

/** The docker client: `docker` on PATH, or `JOULEBENCH_DOCKER_BIN` (how the tests put a fake in its place). */
function dockerBin(): string {
  return process.env.JOULEBENCH_DOCKER_BIN || 'docker';
}

/** `--runner docker`: the SWE-bench instances' tests run in their images (checked present in loadSuite). */
function containerTestsFrom(flags: CodeFlags): ContainerTests | undefined {
  if (flags.runner !== 'docker') return undefined;
  return dockerRunner({
    bin: dockerBin(),
    namespace: flags.namespace === 'none' ? null : flags.namespace,
    tag: flags.imageTag,
    arch: swebenchArch(machine()),
    pull: flags.pull ?? false,
    memory_mb: flags.memoryMb,
    pids_limit: flags.maxProcs,
  });
}

/** How the oracle's invalid_reason starts for a solver whose command is missing. */
const UNAVAILABLE = 'solver not available: ';

/** The datapoints JSONL: `--datapoints`, else beside `--out`, else under ./.joulebench/runs/. */
function datapointsPath(flags: CodeFlags, suiteName: string, started: Date, outIsRegular: boolean): string {
  if (flags.datapoints) return flags.datapoints;
  return `${sideFileBase(flags.out, outIsRegular, `code-${suiteName}`, started)}.datapoints.jsonl`;
}

/** A coding-agent results document in every format `-o` offers. */
function codeRenderings(results: CodeResults, label: string, json = prettyJson(results)): Renderings {
  return {
    json: () => json,
    md: async () => (await import('../../report/markdown.js')).renderCodeMarkdown(results, { title: `joulebench code · ${label}` }),
    html: async () => (await import('../../report/html/index.js')).buildHtmlReport([{ kind: 'code', label, origin: label, results, run_id: null }]),
    csv: async () => (await import('../../report/csv.js')).datapointsCsv([{ label, datapoints: results.datapoints }]),
    jsonl: () => results.datapoints.map((d) => JSON.stringify(d)).join('\n') + (results.datapoints.length ? '\n' : ''),
    txt: () => renderCodeTable(results),
  };
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
