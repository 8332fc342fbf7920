import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { JoulebenchError } from '../core/errors.js';
import { round } from '../core/stats.js';
import type { EnergySource } from '../core/types.js';
import type { Meter } from '../meters/meter.js';
import { netJoules, type IdleCalibration, type WindowValidity } from '../core/energy.js';
import { attempt } from './attempt.js';
import { DatapointInvalid, type ContainerTests } from './docker-runner.js';
import { harnessChanges } from './harness.js';
import { packageRoot } from './paths.js';
import { execSandboxed } from './process.js';
import { chownTree, DEFAULT_MEMORY_MB, reachableBy, type Sandbox, type SandboxKind } from './sandbox.js';
import { commandRun, runTaskTests, type CommandRun } from './test-rule.js';
import { baselineProblem, gradeVerdict, type GradedRun } from './test-report/rule.js';
import { withReportEnv } from './test-report/setup.js';
import type { SolveOutcome, Solver } from './solvers/solver.js';
import { listFiles, type CodeTask } from './task.js';
import { diffSnapshots, snapshotTrees } from './watch.js';
import { changedHiddenTests, changedTestFiles, copyTree, keepDirs, layPaths, lstatOrNull, prepareWorkdir, removeDirs, restoreTestFilesOrWhy } from './workdir.js';
import { treeDiff } from './tree-diff.js';

/** One run of the task's tests: what the grading rule reads, its wall time and the end of its output. */
export interface TestRun extends GradedRun {
  wall_ms: number;
  /** The last 4 KiB of the run's output (stdout, then stderr): the evidence when a run could not start. */
  output_tail?: string | null;
}

/** What a datapoint keeps of the solver's outcome. */
type SolverRunFields = Pick<SolveOutcome, 'exit_code' | 'signal' | 'timed_out' | 'stragglers_killed' | 'error' | 'output_tail' | 'tracking' | 'peak_rss_bytes'>;

/** Everything known about one (task, solver, rollout); cost, tokens and the `cascade:` cache fields as the solver gave them. */
export interface Datapoint
  extends Pick<SolveOutcome, 'cost_usd' | 'prompt_tokens' | 'completion_tokens' | 'usage_parsed_from' | 'cache' | 'cache_origin'> {
  task: string;
  solver: string;
  /** 0-based rollout number. */
  rollout: number;
  /** False when the datapoint cannot count: the tests already passed before the solver ran, or could not run. */
  valid: boolean;
  invalid_reason: string | null;
  /** Valid, tests pass after the pristine tests were restored, and nothing outside the workdir changed. */
  resolved: boolean;
  /** The tests on the untouched tree (must fail). */
  baseline: TestRun;
  /** The solver's run and its wall time, ms; `null` when it did not run (invalid datapoint). */
  solver_run: (SolverRunFields & { wall_ms: number }) | null;
  /** The tests after the solver, with the pristine test files restored; `null` when not run. */
  grade: TestRun | null;
  /** Why a graded datapoint is not resolved (from the per-test rule), `null` when resolved or not graded. */
  grade_reason?: string | null;
  /** Tests the baseline ran that grading did not report (deleted, never reached, an early exit). */
  tests_missing?: string[];
  /** Tests the baseline ran that grading reported skipped or todo. */
  tests_skipped?: string[];
  /** Test files the solver changed (restored before grading, never counted) and harness changes (not resolved). */
  tests_modified: string[];
  /** The harness entries of `tests_modified` (any one fails the datapoint). */
  harness_modified?: string[];
  /**
   * What the solver changed: the unified diff from before/ to its workdir (SWE-bench's `model_patch`), for
   * reading; clipped at {@link DIFF_KEEP_BYTES}, `diff_bytes` its whole size. Grading never reads it.
   */
  diff?: string | null;
  diff_bytes?: number;
  /** Why `diff` is null (git missing or failing): shown, never counted against the solver. */
  diff_error?: string;
  /** Paths outside the workdir this datapoint changed; any entry fails it. */
  escapes: string[];
  /** Energy over the solver's window, gross; `null` when not measured (never 0 for unknown). */
  joules: number | null;
  /** Gross minus idle power × window (equal to gross for marginal sources); `null` when idle is unknown. */
  net_joules: number | null;
  energy_source: EnergySource;
  /** The window was shorter than the meter's floor: the figure is noise-dominated (`~`). */
  below_floor: boolean;
  window_ms: number | null;
  /** The solver window's reading per meter domain (absent when the meter has none): the report's energy layers. */
  by_domain?: Record<string, { joules: number | null; source: EnergySource }>;
  /** How far the solver window's samples can be trusted (absent when the meter keeps none); not valid: its energy is never summed. */
  energy_validity?: WindowValidity;
  sandbox: SandboxKind;
  /** Where the tests ran: absent for the local sandbox, `docker` for the instance's container (`--runner docker`). */
  runner?: 'docker';
  /** The container image the tests ran in (docker runner), and its id once inspected. */
  image?: string;
  image_id?: string | null;
  /** The kept workdir (`--keep`), else `null`. */
  workdir: string | null;
  /** Set when the oracle itself could not finish this datapoint (it then counts as not resolved). */
  error: string | null;
}

/** The fixed parts of every datapoint in a run. */
export interface OracleOptions {
  meter: Meter;
  sandbox: Sandbox;
  /** Solver and test environment (secrets already removed). */
  env: NodeJS.ProcessEnv;
  /** The solver's limit when the task sets none, seconds. */
  default_timeout_s: number;
  /** Overrides every task's solver limit, seconds. */
  timeout_s?: number;
  kill_grace_ms?: number;
  keep?: boolean;
  /** Where datapoint folders are made (default: the OS temp folder). */
  tmp_base?: string;
  idle?: IdleCalibration | null;
  /** Memory limit of each solver and test run, MiB (default 4096); passing it stops the run. */
  memory_mb?: number;
  /** Preload the grading guard that freezes node:assert / node:test (default true). */
  guard?: boolean;
  /** Run the baseline and grading tests in containers (`--runner docker`) instead of the local sandbox. */
  container?: ContainerTests;
  /** The run's id, handed to solvers (a cached fix records it). */
  run_id?: string;
}

/** The most of a solver's diff a datapoint keeps, bytes: enough to read a fix, not a vendored tree. */
export const DIFF_KEEP_BYTES = 64 * 1024;

/** Records the solver's diff on `dp`, outside the energy window; a failure to make it is noted, not a verdict. */
export function keepDiff(dp: Pick<Datapoint, 'diff' | 'diff_bytes' | 'diff_error'>, beforeDir: string, workdir: string): void {
  try {
    const diff = Buffer.from(treeDiff(beforeDir, workdir));
    dp.diff_bytes = diff.length;
    // Cut at a line end so the kept part is whole lines.
    const cut = diff.length <= DIFF_KEEP_BYTES ? diff.length : diff.lastIndexOf(0x0a, DIFF_KEEP_BYTES - 1) + 1;
    dp.diff = diff.subarray(0, cut).toString('utf8');
  } catch (e) {
    dp.diff = null;
    dp.diff_error = `the diff could not be made: ${(e as Error).message.split('\n')[0]}`;
  }
}

/**
 * The test oracle for one (task, solver, rollout), SWE-bench style (docs/coding-agents.md): the tests must fail
 * on before/; the solver runs metered on a copy never holding the hidden tests; its processes are killed; grading
 * runs on a fresh copy with pristine and hidden tests laid over. Resolved iff they pass, harness and outside untouched.
 */
export async function runDatapoint(task: CodeTask, solver: Solver, rollout: number, opts: OracleOptions): Promise<Datapoint> {
  const dirs = prepareWorkdir(task, opts.tmp_base);
  if (opts.sandbox.run_as_uid !== null) {
    // The sandboxed uid must pass through the (root-owned, private) datapoint folder to its trees.
    chmodSync(dirs.root, 0o711);
    if (!reachableBy(opts.sandbox.run_as_uid, dirs.root)) {
      removeDirs(dirs);
      throw new JoulebenchError(
        'E_CONFIG',
        `${dirname(dirs.root)}: the sandbox runs solvers as uid ${opts.sandbox.run_as_uid}, which cannot reach this folder; use a temp folder every user can enter (chmod o+x each folder on the way)`,
      );
    }
  }
  const baseDir = join(dirs.root, 'baseline');
  const gradeDir = join(dirs.root, 'grade');
  // Test reports are written here, outside every tree the code under test lives in.
  const reportDir = join(dirs.root, 'reports');
  mkdirSync(reportDir, { mode: 0o700 });
  if (opts.sandbox.run_as_uid !== null) chownSync(reportDir, opts.sandbox.run_as_uid, opts.sandbox.run_as_uid);
  const watched = [dirs.root, task.dir];
  const excluded = [dirs.workdir, baseDir, gradeDir, reportDir];
  const before = snapshotTrees(watched, excluded);
  const grace = opts.kill_grace_ms ?? 1000;
  const memoryBytes = (opts.memory_mb ?? DEFAULT_MEMORY_MB) * 1024 * 1024;
  const memoryFlag = `(--memory-mb ${opts.memory_mb ?? DEFAULT_MEMORY_MB})`;
  const dp = newDatapoint(task, solver, rollout, opts.sandbox.kind);
  let replaced: string | null = null;
  try {
    const container = opts.container;
    if (container) {
      // The baseline runs in a fresh container of the instance's image (a missing image: invalid).
      dp.runner = 'docker';
      dp.image = container.image(task);
      dp.baseline = await container.baseline(task).finally(() => {
        dp.image_id = container.imageId(task);
      });
    } else {
      // The baseline runs on its own copy, hidden tests included, so the solver's tree never holds them.
      copyTree(task.before_dir, baseDir);
      dp.baseline = await runTests(task, baseDir, reportDir, 'baseline', opts, grace, memoryBytes);
      rmSync(baseDir, { recursive: true, force: true });
    }
    const problem = baselineProblem(task, dp.baseline);
    if (problem) return invalid(dp, problem);

    if (opts.sandbox.run_as_uid !== null) chownTree(dirs.workdir, opts.sandbox.run_as_uid);
    const timeout_s = opts.timeout_s ?? task.timeout_s ?? opts.default_timeout_s;
    const window = await opts.meter.start();
    const t0 = performance.now();
    let outcome;
    try {
      outcome = await solver.solve({
        task,
        workdir: dirs.workdir,
        sandbox: opts.sandbox,
        env: opts.env,
        timeout_ms: timeout_s * 1000,
        kill_grace_ms: grace,
        memory_limit_bytes: memoryBytes,
        hide: task.private_paths,
        run_id: opts.run_id,
      });
    } catch (e) {
      outcome = null;
      dp.solver_run = { exit_code: null, signal: null, timed_out: false, wall_ms: 0, stragglers_killed: 0, error: (e as Error).message, output_tail: null };
    }
    const wall_ms = round(performance.now() - t0, 3);
    const reading = await window.stop();
    if (outcome) {
      const { exit_code, signal, timed_out, stragglers_killed, error, output_tail } = outcome;
      const run = { exit_code, signal, timed_out, wall_ms, stragglers_killed, error, output_tail };
      dp.solver_run = { ...run, tracking: outcome.tracking ?? null, peak_rss_bytes: outcome.peak_rss_bytes ?? null };
      const { cost_usd, prompt_tokens, completion_tokens, usage_parsed_from } = outcome;
      Object.assign(dp, { cost_usd, prompt_tokens, completion_tokens, usage_parsed_from });
      if (outcome.cache) dp.cache = outcome.cache;
      if (outcome.cache_origin) dp.cache_origin = outcome.cache_origin;
    } else if (dp.solver_run) {
      dp.solver_run.wall_ms = wall_ms;
    }
    dp.joules = reading.joules;
    dp.energy_source = reading.source;
    // A meter that forgot to flag a short window is still held to its declared floor.
    dp.below_floor = reading.below_floor || (reading.joules !== null && reading.window_ms < opts.meter.floor_ms);
    dp.window_ms = round(reading.window_ms, 3);
    dp.net_joules = opts.idle ? netJoules(reading.joules, opts.idle, dp.window_ms) : null;
    if (Object.keys(reading.by_domain).length > 0) dp.by_domain = reading.by_domain;
    if (reading.validity) dp.energy_validity = reading.validity;

    if (outcome?.unavailable) return invalid(dp, `solver not available: ${outcome.unavailable}`);
    if (outcome?.memory_exceeded) return invalid(dp, `the solver passed the memory limit ${memoryFlag} and was stopped`);

    // A solver that removed its workdir or swapped it for a link must not make restoring write elsewhere.
    if (!lstatOrNull(dirs.workdir)?.isDirectory()) {
      replaced = `replaced ${dirs.workdir} (the workdir itself)`;
      rmSync(dirs.workdir, { recursive: true, force: true });
      mkdirSync(dirs.workdir);
    }
    const harness = harnessChanges(task.before_dir, dirs.workdir);
    dp.tests_modified = [...new Set([...changedTestFiles(task, dirs.workdir), ...changedHiddenTests(task, dirs.workdir), ...harness])].sort();
    if (harness.length > 0) dp.harness_modified = harness;
    keepDiff(dp, task.before_dir, dirs.workdir);
    // Grade a fresh copy: nothing the solver left running (or still holding a path) can reach it.
    copyTree(dirs.workdir, gradeDir);
    const unrestored = restoreTestFilesOrWhy(task, gradeDir);
    if (unrestored) return invalid(dp, unrestored);
    // The container gets the solver's tree as a diff over base_commit, then test_patch, then the tests.
    dp.grade = container
      ? await container.grade(task, gradeDir)
      : await runTests(task, gradeDir, reportDir, 'grade', opts, grace, memoryBytes);
    if (dp.grade.memory_exceeded) invalid(dp, `the graded tests passed the memory limit ${memoryFlag} and were stopped`);
    const verdict = gradeVerdict(task, dp.baseline, dp.grade);
    dp.tests_missing = verdict.tests_missing;
    dp.tests_skipped = verdict.tests_skipped;
    dp.grade_reason = harness.length > 0 ? `the test harness was changed: ${harness.join(', ')}` : verdict.reason;
    dp.resolved = dp.valid && verdict.resolved && harness.length === 0;
    await solver.graded?.(task, dirs.workdir, dp);
  } catch (e) {
    if (e instanceof DatapointInvalid) {
      // A container phase could not run (no image, Docker failing): the datapoint cannot count. A solver run
      // is always recorded before grading, so its presence says which phase failed: baseline or grading.
      invalid(dp, dp.solver_run ? `grading could not run: ${e.message}` : e.message);
    } else {
      dp.error = `oracle: ${(e as Error).message}`;
      dp.resolved = false;
    }
  } finally {
    dp.escapes = diffSnapshots(before, snapshotTrees(watched, excluded));
    if (replaced) dp.escapes.unshift(replaced);
    if (dp.escapes.length > 0) dp.resolved = false;
    if (opts.keep) {
      dp.workdir = dirs.workdir;
      keepDirs(dirs);
    } else {
      try {
        removeDirs(dirs);
      } catch (e) {
        dp.error ??= `could not remove ${dirs.root}: ${(e as Error).message}`;
      }
    }
  }
  return dp;
}

/** A datapoint before anything ran: valid until shown otherwise, nothing measured (nulls, never 0). */
export function newDatapoint(task: CodeTask, solver: Solver, rollout: number, sandbox: SandboxKind): Datapoint {
  return {
    task: task.name,
    solver: solver.id,
    rollout,
    valid: true,
    invalid_reason: null,
    resolved: false,
    baseline: { exit_code: null, timed_out: false, wall_ms: 0 },
    solver_run: null,
    grade: null,
    tests_modified: [],
    escapes: [],
    joules: null,
    net_joules: null,
    energy_source: 'none',
    below_floor: false,
    window_ms: null,
    cost_usd: null,
    prompt_tokens: null,
    completion_tokens: null,
    usage_parsed_from: null,
    sandbox,
    workdir: null,
    error: null,
  };
}

/** Marks `dp` invalid (it cannot count) for `reason`; returns it. */
export function invalid(dp: Datapoint, reason: string): Datapoint {
  dp.valid = false;
  dp.invalid_reason = reason;
  return dp;
}

let stagedGuard: string | null = null;

/**
 * The grading guard preloaded into every Node process the tests start, copied once per process into a
 * folder anyone may read: the tests' unprivileged user may not reach the package (under /root, say).
 */
export function guardPath(): string {
  if (stagedGuard !== null && existsSync(stagedGuard)) return stagedGuard;
  const source = join(packageRoot(), 'src', 'code', 'guard', 'freeze-test-harness.mjs');
  const dir = mkdtempSync(join(tmpdir(), 'joulebench-guard-'));
  chmodSync(dir, 0o755);
  const staged = join(dir, 'freeze-test-harness.mjs');
  copyFileSync(source, staged);
  chmodSync(staged, 0o444);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return (stagedGuard = staged);
}

/**
 * Runs the tests in `dir` sandboxed (they run the solver's code), guard preloaded, reports in `reportDir` outside the tree.
 * The task's hidden tests (tests/) are first laid over the tree, file by file, replacing whatever the solver put there.
 */
async function runTests(task: CodeTask, dir: string, reportDir: string, phase: string, opts: OracleOptions, grace: number, memoryBytes: number): Promise<TestRun> {
  if (task.tests_dir) layPaths(task.tests_dir, listFiles(task.tests_dir), dir);
  if (opts.sandbox.run_as_uid !== null) chownTree(dir, opts.sandbox.run_as_uid);
  const guard = opts.guard !== false ? guardPath() : null;
  const env: NodeJS.ProcessEnv = { ...opts.env };
  if (guard) env.NODE_OPTIONS = `${env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ` : ''}--import=${JSON.stringify(pathToFileURL(guard).href)}`;
  const once = async (cmd: string, n: number): Promise<CommandRun> => {
    const reportPath = join(reportDir, `${phase}-${n}.${task.test_format === 'tap' ? 'tap' : 'xml'}`);
    rmSync(reportPath, { force: true });
    const wrap = { hide: task.private_paths, rw_binds: [reportDir], ...(guard ? { ro_binds: [guard] } : {}) };
    const r = await execSandboxed(opts.sandbox, cmd, dir, wrap, {
      env: withReportEnv(task.test_format, reportPath, env),
      timeout_ms: task.test_timeout_s * 1000,
      kill_grace_ms: grace,
      max_output_bytes: 64 * 1024,
      memory_limit_bytes: memoryBytes,
    });
    const output = `${r.stdout}${r.stderr ? `\n[stderr]\n${r.stderr}` : ''}${r.spawn_error ? `\n[spawn] ${r.spawn_error}` : ''}`;
    const memory = r.tracking?.memory_exceeded_bytes != null ? { memory_exceeded: true } : {};
    return commandRun({ exit_code: r.exit_code, timed_out: r.timed_out, wall_ms: r.wall_ms, report: readReport(reportPath), ...memory }, output, dir);
  };
  return runTaskTests(task, once);
}

/** The largest test report read, bytes: a bigger file is not a report this oracle grades from. */
const MAX_REPORT_BYTES = 64 * 1024 * 1024;

/** A report file's text; `null` when none was written (or it is not a regular file). */
function readReport(path: string): string | null {
  const st = lstatOrNull(path);
  if (!st?.isFile() || st.size > MAX_REPORT_BYTES) return null;
  return attempt(() => readFileSync(path, 'utf8'), null);
}
