import type { Sandbox } from '../sandbox.js';
import type { CodeTask } from '../task.js';
import type { Datapoint } from '../oracle.js';
import type { CacheOrigin } from './cascade.js';
import type { TrackingMethod } from '../tracker.js';

/** Everything a solver gets for one attempt at one task. */
export interface SolveContext {
  task: CodeTask;
  /** A fresh copy of the task's before/ tree; the solver's edits go here. */
  workdir: string;
  sandbox: Sandbox;
  /** The environment with secrets removed (see env.ts). */
  env: NodeJS.ProcessEnv;
  /** The solver's time limit, ms. */
  timeout_ms: number;
  kill_grace_ms: number;
  /** Stop the solver's processes when together they hold more than this, bytes. */
  memory_limit_bytes: number;
  /** Paths hidden from the solver inside the sandbox (the task folder, a repo mirror). */
  hide: readonly string[];
  /** The run this attempt belongs to (recorded with a cached fix), when known. */
  run_id?: string;
}

/** What a solver did. Wall time and energy are measured around `solve` by the oracle. */
export interface SolveOutcome {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  /** Processes left running after the solver ended, killed by the oracle. */
  stragglers_killed: number;
  /** What the attempt cost in dollars; `null` when the agent did not say. */
  cost_usd: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Which output rule gave cost/tokens, or `null`. */
  usage_parsed_from: string | null;
  /** Why the solver could not run, if it could not. */
  error: string | null;
  /** The end of the solver's output, for diagnosis (bounded). */
  output_tail: string | null;
  /** Set when the solver cannot run here at all (its command is not installed): the datapoint is invalid, not 0 %. */
  unavailable?: string | null;
  /** Its processes passed the memory limit and were stopped. */
  memory_exceeded?: boolean;
  /** How its processes were found and killed before grading; `null` in-process. */
  tracking?: TrackingMethod | null;
  /** Peak resident memory of its processes, bytes (sampled every 100 ms); `null` in-process. */
  peak_rss_bytes?: number | null;
  /** For `cascade:` solvers: whether the cache answered. */
  cache?: 'hit' | 'miss';
  /** For a cache hit: which solver stored the replayed fix, for which task, in which run. */
  cache_origin?: CacheOrigin;
}

/** Something that tries to fix a task in its workdir. */
export interface Solver {
  /** The label in results and tables. */
  readonly id: string;
  readonly kind: 'reference' | 'noop' | 'cmd' | 'cascade';
  solve(ctx: SolveContext): Promise<SolveOutcome>;
  /** Called after grading with the solver's (unrestored) workdir and the datapoint: the cascade stores resolved diffs here. */
  graded?(task: CodeTask, workdir: string, dp: Datapoint): Promise<void> | void;
  /** Static facts for the results (never secrets). */
  describe(): Record<string, unknown>;
  /** What must be runnable or readable inside the sandbox for this solver to start (checked before the first task). */
  preflight?(env: NodeJS.ProcessEnv): { checks: PreflightCheck[]; ro_binds: string[] };
}

/** One path a solver or a task's tests need inside the sandbox. */
export interface PreflightCheck {
  path: string;
  /** `exec`: must run (a command); `read`: must be readable (a file or folder it names). */
  need: 'exec' | 'read';
  /** What the path is, for the message (`the command`, `claude's CLI`, `the test interpreter node`). */
  what: string;
  /** Set when the path could not even be found outside the sandbox (then nothing is run). */
  missing?: string;
}

/** An outcome for solvers that run no process and spend no money. */
export function inProcessOutcome(): SolveOutcome {
  return {
    exit_code: 0,
    signal: null,
    timed_out: false,
    stragglers_killed: 0,
    cost_usd: 0,
    prompt_tokens: null,
    completion_tokens: null,
    usage_parsed_from: null,
    error: null,
    output_tail: null,
  };
}
