import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { JoulebenchError } from '../core/errors.js';
import { round } from '../core/stats.js';
import type { EnergySource } from '../core/types.js';
import type { Meter } from '../meters/meter.js';
import { netJoules, type IdleCalibration } from '../core/energy.js';
import { DatapointInvalid, type ContainerTests } from './docker-runner.js';
import { harnessChanges } from './harness.js';
import { packageRoot } from './paths.js';
import { execTree } from './process.js';
import { chownTree, DEFAULT_MEMORY_MB, reachableBy, type Sandbox, type SandboxKind } from './sandbox.js';
import { runTaskTests, type CommandRun } from './test-rule.js';
import { ProcessTracker, type TrackingMethod } from './tracker.js';
import type { Solver } from './solvers/solver.js';
import { listFiles, type CodeTask } from './task.js';
import { diffSnapshots, snapshotTrees } from './watch.js';
import { changedHiddenTests, changedTestFiles, copyTree, keepDirs, layPaths, prepareWorkdir, removeDirs, restoreTestFilesOrWhy } from './workdir.js';

/** One run of the task's tests. */
export interface TestRun {
  exit_code: number | null;
  timed_out: boolean;
  wall_ms: number;
  /** Per named test (fail_to_pass / pass_to_pass tasks): `pass`, `fail` or `timeout`; absent for one whole-suite run. */
  tests?: Record<string, 'pass' | 'fail' | 'timeout'>;
  /** The run passed the memory limit and was stopped. */
  memory_exceeded?: boolean;
}

/** Everything known about one (task, solver, rollout). */
export interface Datapoint {
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
  /** The solver, `null` when it did not run (invalid datapoint). */
  solver_run: {
    exit_code: number | null;
    signal: string | null;
    timed_out: boolean;
    wall_ms: number;
    stragglers_killed: number;
    error: string | null;
    output_tail: string | null;
    /** How its processes were found and killed before grading (`cgroup`, `process-tree`), `null` in-process. */
    tracking?: TrackingMethod | null;
    /** Peak resident memory of its processes, bytes (sampled every 100 ms), `null` in-process. */
    peak_rss_bytes?: number | null;
  } | null;
  /** The tests after the solver, with the pristine test files restored; `null` when not run. */
  grade: TestRun | null;
  /**
   * Test files the solver changed (restored before grading; reported, never counted), and changes to
   * the test harness (`package.json#scripts.test`, `.mocharc*`, `.npmrc`, `node_modules/`), which
   * cannot be undone and make the datapoint not resolved.
   */
  tests_modified: string[];
  /** The harness entries of `tests_modified` (any one fails the datapoint). */
  harness_modified?: string[];
  /** The `cascade:` cache: `hit` (a stored diff was replayed), `miss`, or absent for other solvers. */
  cache?: 'hit' | 'miss';
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
  cost_usd: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  usage_parsed_from: string | null;
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
}

/**
 * The test oracle for one (task, solver, rollout), SWE-bench style: the tests (with any hidden ones)
 * must fail on a copy of before/; the solver runs inside an energy window on another copy that never
 * holds the hidden tests; every process it started is then killed; grading runs on a fresh copy of
 * what it left, with the pristine and hidden tests laid over it. Resolved iff the tests then pass,
 * the harness is untouched and nothing outside the workdir changed.
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
  const watched = [dirs.root, task.dir];
  const excluded = [dirs.workdir, baseDir, gradeDir];
  const before = snapshotTrees(watched, excluded);
  const grace = opts.kill_grace_ms ?? 1000;
  const memoryBytes = (opts.memory_mb ?? DEFAULT_MEMORY_MB) * 1024 * 1024;
  const dp: Datapoint = {
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
    sandbox: opts.sandbox.kind,
    workdir: null,
    error: null,
  };
  let replaced: string | null = null;
  try {
    if (opts.container) {
      // The baseline runs in a fresh container of the instance's image (a missing image: invalid).
      dp.runner = 'docker';
      dp.image = opts.container.image(task);
      try {
        dp.baseline = await opts.container.baseline(task);
      } catch (e) {
        if (!(e instanceof DatapointInvalid)) throw e;
        dp.valid = false;
        dp.invalid_reason = e.message;
        return dp;
      } finally {
        dp.image_id = opts.container.imageId(task);
      }
    } else {
      // The baseline runs on its own copy, hidden tests included, so the solver's tree never holds them.
      copyTree(task.before_dir, baseDir);
      overlayHiddenTests(task, baseDir);
      if (opts.sandbox.run_as_uid !== null) chownTree(baseDir, opts.sandbox.run_as_uid);
      dp.baseline = await runTests(task, baseDir, opts, grace, memoryBytes);
      rmSync(baseDir, { recursive: true, force: true });
    }
    const invalid = baselineProblem(task, dp.baseline);
    if (invalid) {
      dp.valid = false;
      dp.invalid_reason = invalid;
      return dp;
    }

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
      });
    } catch (e) {
      outcome = null;
      dp.solver_run = { exit_code: null, signal: null, timed_out: false, wall_ms: 0, stragglers_killed: 0, error: (e as Error).message, output_tail: null };
    }
    const wall_ms = round(performance.now() - t0, 3);
    const reading = await window.stop();
    if (outcome) {
      dp.solver_run = {
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        timed_out: outcome.timed_out,
        wall_ms,
        stragglers_killed: outcome.stragglers_killed,
        error: outcome.error,
        output_tail: outcome.output_tail,
        tracking: outcome.tracking ?? null,
        peak_rss_bytes: outcome.peak_rss_bytes ?? null,
      };
      dp.cost_usd = outcome.cost_usd;
      dp.prompt_tokens = outcome.prompt_tokens;
      dp.completion_tokens = outcome.completion_tokens;
      dp.usage_parsed_from = outcome.usage_parsed_from;
      if (outcome.cache) dp.cache = outcome.cache;
    } else if (dp.solver_run) {
      dp.solver_run.wall_ms = wall_ms;
    }
    dp.joules = reading.joules;
    dp.energy_source = reading.source;
    // A meter that forgot to flag a short window is still held to its declared floor.
    dp.below_floor = reading.below_floor || (reading.joules !== null && reading.window_ms < opts.meter.floor_ms);
    dp.window_ms = round(reading.window_ms, 3);
    dp.net_joules = opts.idle ? netJoules(reading.joules, opts.idle, dp.window_ms) : null;

    if (outcome?.unavailable) {
      dp.valid = false;
      dp.invalid_reason = `solver not available: ${outcome.unavailable}`;
      return dp;
    }
    if (outcome?.memory_exceeded) {
      dp.valid = false;
      dp.invalid_reason = `the solver passed the memory limit (--memory-mb ${opts.memory_mb ?? DEFAULT_MEMORY_MB}) and was stopped`;
      return dp;
    }

    // A solver that removed its workdir or swapped it for a link must not make restoring write elsewhere.
    if (!isRealDir(dirs.workdir)) {
      replaced = `replaced ${dirs.workdir} (the workdir itself)`;
      rmSync(dirs.workdir, { recursive: true, force: true });
      mkdirSync(dirs.workdir);
    }
    const harness = harnessChanges(task.before_dir, dirs.workdir);
    dp.tests_modified = [...new Set([...changedTestFiles(task, dirs.workdir), ...changedHiddenTests(task, dirs.workdir), ...harness])].sort();
    if (harness.length > 0) dp.harness_modified = harness;
    // Grade a fresh copy: nothing the solver left running (or still holding a path) can reach it.
    copyTree(dirs.workdir, gradeDir);
    const unrestored = restoreTestFilesOrWhy(task, gradeDir);
    if (unrestored) {
      dp.valid = false;
      dp.invalid_reason = unrestored;
      return dp;
    }
    if (opts.container) {
      // The container gets the solver's tree as a diff over base_commit, then test_patch, then the tests.
      try {
        dp.grade = await opts.container.grade(task, gradeDir);
      } catch (e) {
        if (!(e instanceof DatapointInvalid)) throw e;
        dp.valid = false;
        dp.invalid_reason = `grading could not run: ${e.message}`;
        return dp;
      }
    } else {
      overlayHiddenTests(task, gradeDir);
      if (opts.sandbox.run_as_uid !== null) chownTree(gradeDir, opts.sandbox.run_as_uid);
      dp.grade = await runTests(task, gradeDir, opts, grace, memoryBytes);
    }
    if (dp.grade.memory_exceeded) {
      dp.valid = false;
      dp.invalid_reason = `the graded tests passed the memory limit (--memory-mb ${opts.memory_mb ?? DEFAULT_MEMORY_MB}) and were stopped`;
    }
    dp.resolved = dp.valid && dp.grade.exit_code === 0 && !dp.grade.timed_out && harness.length === 0;
    await solver.graded?.(task, dirs.workdir, dp);
  } catch (e) {
    dp.error = `oracle: ${(e as Error).message}`;
    dp.resolved = false;
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

/** Why a baseline makes the datapoint invalid (SWE-bench: fail-to-pass must fail, pass-to-pass must pass), or `null`. */
function baselineProblem(task: CodeTask, b: TestRun): string | null {
  if (b.memory_exceeded) return 'the tests passed the memory limit before the solver ran';
  if (b.exit_code === 126 || b.exit_code === 127) {
    // sh's "not executable" / "command not found": the tests never ran, so their failure proves nothing.
    return `test_cmd could not run (exit ${b.exit_code}: ${b.exit_code === 127 ? 'command not found' : 'not executable'})`;
  }
  if (b.tests) {
    const passing = task.fail_to_pass.filter((t) => b.tests?.[t] === 'pass');
    if (passing.length > 0) return `fail_to_pass test(s) already pass before the solver runs: ${passing.join(', ')}`;
    const broken = task.pass_to_pass.filter((t) => b.tests?.[t] !== 'pass');
    if (broken.length > 0) return `pass_to_pass test(s) do not pass before the solver runs: ${broken.join(', ')}`;
    return null;
  }
  if (b.timed_out) return `the tests timed out before the solver ran (test_timeout_s ${task.test_timeout_s})`;
  if (b.exit_code === 0) return 'the tests already pass before the solver runs (the task does not reproduce its bug)';
  return null;
}

/** Lays the task's hidden tests (tests/) over a tree, file by file, replacing whatever the solver put there. */
export function overlayHiddenTests(task: CodeTask, dir: string): void {
  if (task.tests_dir) layPaths(task.tests_dir, listFiles(task.tests_dir), dir);
}

let stagedGuard: string | null = null;

/**
 * The grading guard preloaded into every Node process the tests start. The tests run as an
 * unprivileged user (uid 65534 when joulebench is root), who may not be able to reach the package's
 * own folder (a clone under /root or a 0700 temp folder), so the guard is copied once per process
 * into a fresh folder of its own that anyone may read.
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
 * Runs the tests in `dir` under the sandbox (tests run the solver's code, so they are confined too),
 * with the guard preloaded. With fail_to_pass / pass_to_pass, each named test is one run of
 * `test_cmd` with `{test}` replaced (or the name appended); the whole passes iff every one does.
 */
async function runTests(task: CodeTask, dir: string, opts: OracleOptions, grace: number, memoryBytes: number): Promise<TestRun> {
  const guard = opts.guard !== false ? guardPath() : null;
  const env: NodeJS.ProcessEnv = { ...opts.env };
  if (guard) env.NODE_OPTIONS = `${env.NODE_OPTIONS ? `${env.NODE_OPTIONS} ` : ''}--import=${JSON.stringify(pathToFileURL(guard).href)}`;
  const once = async (cmd: string): Promise<CommandRun> => {
    const tracker = new ProcessTracker(memoryBytes, dir);
    const w = opts.sandbox.wrap(['sh', '-c', cmd], dir, { hide: task.private_paths, ...(guard ? { ro_binds: [guard] } : {}) });
    const r = await execTree(w.argv, {
      cwd: dir,
      env,
      timeout_ms: task.test_timeout_s * 1000,
      kill_grace_ms: grace,
      sweep_dir: dir,
      max_output_bytes: 64 * 1024,
      fd_files: w.fd_files,
      tracker,
    });
    return { exit_code: r.exit_code, timed_out: r.timed_out, wall_ms: r.wall_ms, ...(r.tracking?.memory_exceeded_bytes != null ? { memory_exceeded: true } : {}) };
  };
  return runTaskTests(task, once);
}

function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}
