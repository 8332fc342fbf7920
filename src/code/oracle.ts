import { lstatSync, mkdirSync, rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { round } from '../core/stats.js';
import type { EnergySource } from '../core/types.js';
import type { Meter } from '../meters/meter.js';
import { netJoules, type IdleCalibration } from '../core/energy.js';
import { execTree } from './process.js';
import type { Sandbox, SandboxKind } from './sandbox.js';
import type { Solver } from './solvers/solver.js';
import type { CodeTask } from './task.js';
import { diffSnapshots, snapshotTrees } from './watch.js';
import { changedTestFiles, keepDirs, prepareWorkdir, removeDirs, restoreTestFilesOrWhy } from './workdir.js';

/** One run of the task's tests. */
export interface TestRun {
  exit_code: number | null;
  timed_out: boolean;
  wall_ms: number;
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
  } | null;
  /** The tests after the solver, with the pristine test files restored; `null` when not run. */
  grade: TestRun | null;
  /** Test files the solver changed (restored before grading; reported, never counted). */
  tests_modified: string[];
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
}

/**
 * The test oracle for one (task, solver, rollout): fresh workdir from before/; tests must fail; the
 * solver runs inside an energy window; pristine tests are restored; resolved iff they then pass and
 * nothing outside the workdir changed.
 */
export async function runDatapoint(task: CodeTask, solver: Solver, rollout: number, opts: OracleOptions): Promise<Datapoint> {
  const dirs = prepareWorkdir(task, opts.tmp_base);
  const watched = [dirs.root, task.dir];
  const before = snapshotTrees(watched, [dirs.workdir]);
  const grace = opts.kill_grace_ms ?? 1000;
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
    dp.baseline = await runTests(task, dirs.workdir, opts, grace);
    if (dp.baseline.exit_code === 0 && !dp.baseline.timed_out) {
      dp.valid = false;
      dp.invalid_reason = 'the tests already pass before the solver runs (the task does not reproduce its bug)';
      return dp;
    }
    if (dp.baseline.exit_code === 126 || dp.baseline.exit_code === 127) {
      // sh's "not executable" / "command not found": the tests never ran, so their failure proves nothing.
      dp.valid = false;
      dp.invalid_reason = `test_cmd could not run (exit ${dp.baseline.exit_code}: ${dp.baseline.exit_code === 127 ? 'command not found' : 'not executable'})`;
      return dp;
    }
    if (dp.baseline.timed_out) {
      dp.valid = false;
      dp.invalid_reason = `the tests timed out before the solver ran (test_timeout_s ${task.test_timeout_s})`;
      return dp;
    }

    const timeout_s = opts.timeout_s ?? task.timeout_s ?? opts.default_timeout_s;
    const window = await opts.meter.start();
    const t0 = performance.now();
    let outcome;
    try {
      outcome = await solver.solve({ task, workdir: dirs.workdir, sandbox: opts.sandbox, env: opts.env, timeout_ms: timeout_s * 1000, kill_grace_ms: grace });
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
      };
      dp.cost_usd = outcome.cost_usd;
      dp.prompt_tokens = outcome.prompt_tokens;
      dp.completion_tokens = outcome.completion_tokens;
      dp.usage_parsed_from = outcome.usage_parsed_from;
    } else if (dp.solver_run) {
      dp.solver_run.wall_ms = wall_ms;
    }
    dp.joules = reading.joules;
    dp.energy_source = reading.source;
    // A meter that forgot to flag a short window is still held to its declared floor.
    dp.below_floor = reading.below_floor || (reading.joules !== null && reading.window_ms < opts.meter.floor_ms);
    dp.window_ms = round(reading.window_ms, 3);
    dp.net_joules = opts.idle ? netJoules(reading.joules, opts.idle, dp.window_ms) : null;

    // A solver that removed its workdir or swapped it for a link must not make restoring write elsewhere.
    if (!isRealDir(dirs.workdir)) {
      replaced = `replaced ${dirs.workdir} (the workdir itself)`;
      rmSync(dirs.workdir, { recursive: true, force: true });
      mkdirSync(dirs.workdir);
    }
    dp.tests_modified = changedTestFiles(task, dirs.workdir);
    const unrestored = restoreTestFilesOrWhy(task, dirs.workdir);
    if (unrestored) {
      dp.valid = false;
      dp.invalid_reason = unrestored;
      return dp;
    }
    dp.grade = await runTests(task, dirs.workdir, opts, grace);
    dp.resolved = dp.grade.exit_code === 0 && !dp.grade.timed_out;
  } catch (e) {
    dp.error = `oracle: ${(e as Error).message}`;
    dp.resolved = false;
  } finally {
    dp.escapes = diffSnapshots(before, snapshotTrees(watched, [dirs.workdir]));
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

/** Runs `test_cmd` in the workdir under the sandbox; tests run the solver's code, so they are confined too. */
async function runTests(task: CodeTask, workdir: string, opts: OracleOptions, grace: number): Promise<TestRun> {
  const r = await execTree(opts.sandbox.wrap(['sh', '-c', task.test_cmd], workdir), {
    cwd: workdir,
    env: opts.env,
    timeout_ms: task.test_timeout_s * 1000,
    kill_grace_ms: grace,
    sweep_dir: workdir,
    max_output_bytes: 64 * 1024,
  });
  return { exit_code: r.exit_code, timed_out: r.timed_out, wall_ms: round(r.wall_ms, 3) };
}

function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}
