import { randomBytes } from 'node:crypto';
import { summarizeSolvers, summaryOptionsOf } from './aggregate.js';
import { calibrateCodeIdle } from './energy.js';
import { invalid, newDatapoint, runDatapoint, type Datapoint, type OracleOptions } from './oracle.js';
import { runPreflight, type PreflightProblem } from './preflight.js';
import type { CodeResults } from './results.js';
import { DEFAULT_MEMORY_MB } from './sandbox.js';
import type { Solver } from './solvers/solver.js';
import type { CodeSuite } from './task.js';
import type { PowerTrace } from '../meters/power-trace.js';

/** What a run hands every datapoint as it is. */
type OracleFields = 'meter' | 'sandbox' | 'env' | 'timeout_s' | 'kill_grace_ms' | 'keep' | 'tmp_base' | 'memory_mb' | 'container' | 'run_id';

/** A coding run: every task × solver × rollout through the oracle (`run_id`: one is made when not given). */
export interface CodeRunOptions extends Pick<OracleOptions, OracleFields>, Pick<CodeResults['config'], 'energy_budget_j' | 'prices' | 'pue'> {
  suite: CodeSuite;
  solvers: readonly Solver[];
  /** Attempts per (task, solver); best-of-N. */
  rollouts: number;
  /** Names of the variables removed from `env` (recorded; never values). */
  scrubbed_env?: readonly string[];
  /** The solver's limit when the task sets none, seconds (default 900). */
  default_timeout_s?: number;
  /** Idle calibration window before the run, ms (0: skipped, net unknown). Not run for the `none` meter. */
  idle_ms?: number;
  /** `--power-trace`: power over the idle window, then `scored` from the preflight to the last datapoint graded. */
  trace?: PowerTrace;
  /** Check every solver path and test interpreter inside the sandbox first (default true). */
  preflight?: boolean;
  /** Called with the preflight's problems (none: an empty list), before the first datapoint. */
  onPreflight?: (problems: PreflightProblem[]) => void;
  /** Called once the meter is calibrated, before the first datapoint (for a streamed datapoints file). */
  onStart?: (start: CodeRunStart) => void;
  onDatapoint?: (d: Datapoint, progress: { done: number; total: number }) => void;
}

/** What a run is, known before its first datapoint: the suite and the configuration. */
export type CodeRunStart = Pick<CodeResults, 'suite' | 'config'>;

/** The default limit for a solver on a task that sets no timeout_s, seconds. */
export const DEFAULT_SOLVER_TIMEOUT_S = 900;

/** Runs the suite sequentially (parallel solvers on shared hardware would pollute each other's energy). */
export async function runCodeSuite(opts: CodeRunOptions): Promise<CodeResults> {
  const traceIdle = (opts.idle_ms ?? 0) > 0;
  await opts.trace?.begin(traceIdle ? 'idle' : 'scored');
  try {
    const results = await runTraced(opts, traceIdle);
    if (opts.trace) {
      await opts.trace.end();
      results.power_trace = opts.trace.summary();
    }
    return results;
  } finally {
    await opts.trace?.end();
  }
}

async function runTraced(opts: CodeRunOptions, traceIdle: boolean): Promise<CodeResults> {
  const idle = await calibrateCodeIdle(opts.meter, opts.idle_ms ?? 0);
  if (traceIdle) await opts.trace?.phase('scored');
  const { meter, sandbox, env, timeout_s, kill_grace_ms, tmp_base, memory_mb, container } = opts;
  const default_timeout_s = opts.default_timeout_s ?? DEFAULT_SOLVER_TIMEOUT_S;
  const run_id = opts.run_id ?? `code-${new Date().toISOString()}-${randomBytes(4).toString('hex')}`;
  const keep = opts.keep ?? false;
  const oracle: OracleOptions = {
    meter, sandbox, env, default_timeout_s, timeout_s, kill_grace_ms, keep, tmp_base, memory_mb, container, idle, run_id,
  };
  const start: CodeRunStart = {
    suite: { name: opts.suite.name, source: opts.suite.source, digest: opts.suite.digest, tasks: opts.suite.tasks.map((t) => t.name), dir: opts.suite.dir },
    config: {
      solvers: opts.solvers.map((s) => ({ id: s.id, ...s.describe() })),
      rollouts: opts.rollouts,
      sandbox: opts.sandbox.describe(),
      meter: { id: opts.meter.id, source: opts.meter.source, floor_ms: opts.meter.floor_ms, ...opts.meter.describe() },
      idle,
      timeout_s: opts.timeout_s ?? null,
      default_timeout_s,
      memory_mb: opts.memory_mb ?? DEFAULT_MEMORY_MB,
      scrubbed_env: [...(opts.scrubbed_env ?? [])],
      run_id,
      ...(opts.container ? { runner: opts.container.describe() } : {}),
      ...(opts.energy_budget_j !== undefined ? { energy_budget_j: opts.energy_budget_j } : {}),
      ...(opts.prices ? { prices: opts.prices } : {}),
      ...(opts.pue !== undefined ? { pue: opts.pue } : {}),
    },
  };
  const problems =
    opts.preflight === false
      ? []
      : runPreflight({ solvers: opts.solvers, tasks: container ? [] : opts.suite.tasks, sandbox, env, tmp_base });
  start.config.preflight = problems;
  opts.onPreflight?.(problems);
  opts.onStart?.(start);
  const total = opts.suite.tasks.length * opts.solvers.length * opts.rollouts;
  const datapoints: Datapoint[] = [];
  for (const task of opts.suite.tasks) {
    for (const solver of opts.solvers) {
      for (let r = 0; r < opts.rollouts; r++) {
        const problem = problems.find((p) => (p.scope === 'solver' && p.name === solver.id) || (p.scope === 'task' && p.name === task.name));
        // One the preflight ruled out: nothing ran, nothing is counted.
        const d = problem
          ? invalid(newDatapoint(task, solver, r, sandbox.kind), `${PREFLIGHT_INVALID}${problem.reason}`)
          : await runDatapoint(task, solver, r, oracle);
        datapoints.push(d);
        opts.onDatapoint?.(d, { done: datapoints.length, total });
      }
    }
  }
  return {
    format: 'joulebench-code-results/1',
    ...start,
    solvers: summarizeSolvers(datapoints, opts.solvers.map((s) => s.id), summaryOptionsOf(start.config)),
    datapoints,
  };
}

/** How an invalid_reason starts when the preflight found the datapoint cannot run here. */
export const PREFLIGHT_INVALID = 'preflight: ';
