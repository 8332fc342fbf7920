import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import { canonicalJson } from '../core/canonical.js';
import { resultsFileState } from '../runner/results-state.js';
import { defaultHistoryPath, History } from '../report/history.js';
import { checkSession, runSession, type SessionHooks, type SessionResult } from '../session/run-session.js';
import { checkWriteDir } from '../write-path.js';
import type { MeterOptions } from '../meters/registry.js';
import type { SessionSpec } from '../session/spec.js';
import { armSessionSpec, loadPlan, planDifferences, planDigest, type ExpandedPlan } from './plan.js';
import { readSweepState, writeSweepState, SWEEP_FORMAT, type SweepComparisonSettings, type SweepRunEntry, type SweepState } from './state.js';

export interface SweepOptions {
  /** Folder for every run's files and the state (default ./.joulebench/sweeps/<name>-<UTC>/). */
  out_dir?: string;
  /** Arms run at once (default 1: one after another, so energy is attributed). Above 1, runs are marked `shared`. */
  parallel_arms?: number;
  /** Bootstrap resamples for every report's intervals. */
  bootstrap?: number;
  /** The most cases every report's intervals are bootstrapped over (`run --bootstrap-max-units`). */
  bootstrap_max_units?: number | 'inf';
  /** Record each run in the history (default: yes, at $JOULEBENCH_HOME). */
  history?: false | { path?: string };
  /** Idle calibration window for each run, ms. */
  idle_ms?: number;
  /** `false`: the runs keep no prompt in their results files (`run --no-store-prompts`). */
  store_prompts?: boolean;
  argv?: string[];
  /** Run the arms on a queue (BullMQ on Redis) for `joulebench worker`s instead of here; the files land as a local sweep's. */
  queue?: import('../queue/connection.js').QueueConnection;
  /** Recorded in the state for `report DIR` (see SweepState.comparison). */
  comparison?: SweepComparisonSettings;
  /** Meter settings every arm starts from (`run`'s environment: JOULEBENCH_POWERCAP_ROOT…); an arm's `meter_options` win. */
  meter_options?: MeterOptions;
}

/** How a caller watches a sweep (it prints nothing itself). */
export interface SweepHooks {
  env?: NodeJS.ProcessEnv;
  /** A run is about to start (or resume); `skipped` when it finished before. */
  onRun?(entry: SweepRunEntry, event: 'start' | 'resume' | 'skipped' | 'done' | 'failed'): void;
  onWarning?(message: string): void;
  /** Passed to each run's session (progress per case). */
  onResult?: SessionHooks['onResult'];
  /** Passed to each run's session: its files and case count, before the first case. */
  onStart?: SessionHooks['onStart'];
  signal?: AbortSignal;
  /** `sweep --queue`: progress across workers, after every record that arrives. */
  onQueueProgress?(p: QueueProgress): void;
}

/** Progress of a sweep on a queue: arms done, cases on disk, and cases per worker. */
export interface QueueProgress {
  runs_done: number;
  runs_total: number;
  cases_done: number;
  per_worker: Record<string, number>;
}

export interface SweepOutcome {
  dir: string;
  state: SweepState;
}

/** Slug of a suite name or file for file names. */
function suiteSlug(suite: string): string {
  return basename(suite).replace(/\.(jsonl|json|ya?ml)$/i, '').replace(/[^A-Za-z0-9._-]+/g, '_');
}

/** Runs every arm × suite of a plan as an ordinary run under the sweep's folder, the state file kept for {@link resumeSweep}. */
export async function runSweep(planPath: string, opts: SweepOptions = {}, hooks: SweepHooks = {}): Promise<SweepOutcome> {
  const plan = loadPlan(planPath);
  const started = new Date();
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  const id = `${plan.name}-${stamp}`;
  const dir = opts.out_dir ?? join('.joulebench', 'sweeps', id);
  checkWriteDir(dir, '--out-dir');
  if (existsSync(join(dir, 'sweep.json'))) {
    throw new JoulebenchError('E_USAGE', `${dir} already holds a sweep: continue it with --resume ${dir}, or choose another --out-dir`);
  }
  const runs: SweepRunEntry[] = plan.arms.flatMap((a) =>
    plan.suites.map((s) => {
      const base = join(dir, a.name, suiteSlug(s));
      return { arm: a.name, suite: s, status: 'pending' as const, report: `${base}.json`, results: `${base}.results.jsonl`, receipt: `${base}.receipt.json`, history_id: null, error: null };
    }),
  );
  const slugs = new Set(plan.suites.map(suiteSlug));
  if (slugs.size !== plan.suites.length) throw new JoulebenchError('E_CONFIG', `${planPath}: suites: two suites share a file name (${plan.suites.join(', ')})`);
  const state: SweepState = {
    format: SWEEP_FORMAT,
    id,
    plan_path: resolve(planPath),
    plan_digest: planDigest(plan),
    plan,
    started_utc: started.toISOString(),
    finished_utc: null,
    parallel_arms: opts.parallel_arms ?? 1,
    runs,
    ...(opts.comparison ? { comparison: opts.comparison } : {}),
  };
  await checkArms(state, opts, hooks);
  writeSweepState(dir, state);
  await execute(dir, state, opts, hooks);
  return { dir, state };
}

/** Continues a killed sweep (finished runs kept, an interrupted one resumed); a changed plan is refused, naming the keys. */
export async function resumeSweep(dir: string, opts: Omit<SweepOptions, 'out_dir'> & { plan_path?: string } = {}, hooks: SweepHooks = {}): Promise<SweepOutcome> {
  checkWriteDir(dir, '--resume');
  const state = readSweepState(dir);
  const planPath = opts.plan_path ?? state.plan_path;
  const now: ExpandedPlan = loadPlan(planPath);
  if (planDigest(now) !== state.plan_digest) {
    const keys = planDifferences(state.plan, now);
    throw new JoulebenchError('E_USAGE', `${planPath} changed since the sweep in ${dir} started (${keys.join(', ')}): resume with the plan as it was, or start a new sweep`);
  }
  if (opts.comparison) state.comparison = opts.comparison;
  await checkArms(state, opts, hooks);
  await execute(dir, state, { ...opts, parallel_arms: opts.parallel_arms ?? state.parallel_arms }, hooks);
  return { dir, state };
}

/** Checks every arm × suite still to run (config, target, meter, output paths) before anything runs; a bad arm is E_CONFIG. */
async function checkArms(state: SweepState, opts: SweepOptions, hooks: SweepHooks): Promise<void> {
  // A suite is read once for each set of params that changes it, not once per arm.
  const suitesChecked = new Set<string>();
  for (const entry of state.runs) {
    if (entry.status === 'done' && existsSync(entry.report)) continue;
    const arm = state.plan.arms.find((a) => a.name === entry.arm)!;
    const spec = { ...entrySpec(state, arm, entry, opts), out: entry.report, results: entry.results, receipt: entry.receipt };
    try {
      const suiteKey = canonicalJson([entry.suite, arm.params ?? null]);
      await checkSession(spec, hooks.env ?? process.env, { here: opts.queue === undefined, suite: !suitesChecked.has(suiteKey) });
      suitesChecked.add(suiteKey);
    } catch (e) {
      if (!(e instanceof JoulebenchError)) throw e;
      const message = e.message.startsWith(state.plan_path) ? e.message : `${state.plan_path}: arm ${arm.name}: ${e.message}`;
      throw new JoulebenchError(e.code === 'E_OUTPUT' ? 'E_OUTPUT' : 'E_CONFIG', message, { cause: e });
    }
  }
}

async function execute(dir: string, state: SweepState, opts: SweepOptions, hooks: SweepHooks): Promise<void> {
  if (opts.queue) return executeOnQueue(dir, state, opts, hooks);
  const parallel = opts.parallel_arms ?? 1;
  if (!Number.isInteger(parallel) || parallel < 1) throw new JoulebenchError('E_USAGE', `--parallel-arms must be an integer >= 1, got ${parallel}`);
  const arms = state.plan.arms.map((a) => a.name);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < arms.length) {
      const arm = arms[next++]!;
      for (const entry of state.runs.filter((r) => r.arm === arm)) {
        if (hooks.signal?.aborted) throw new JoulebenchError('E_RUN', 'sweep aborted');
        if (entry.status === 'done' && existsSync(entry.report)) {
          hooks.onRun?.(entry, 'skipped');
          continue;
        }
        try {
          await runOne(dir, state, entry, opts, hooks, parallel > 1);
        } catch (e) {
          // A bad arm (config, unreachable endpoint) fails that arm, not the sweep: the others still run.
          if ((e as { code?: string }).code === 'E_RUN' && hooks.signal?.aborted) throw e;
          entry.status = 'failed';
          entry.error = (e as Error).message.split('\n')[0] ?? String(e);
          writeSweepState(dir, state);
          hooks.onRun?.(entry, 'failed');
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, arms.length) }, worker));
  finish(dir, state);
}

async function runOne(dir: string, state: SweepState, entry: SweepRunEntry, opts: SweepOptions, hooks: SweepHooks, shared: boolean): Promise<SessionResult> {
  const arm = state.plan.arms.find((a) => a.name === entry.arm)!;
  // An interrupted run (cases on disk, no end record) continues from its results file.
  let resume = false;
  if (existsSync(entry.results)) {
    try {
      // Counted, not parsed line by line: a million-case arm is looked at before it resumes.
      const f = resultsFileState(entry.results);
      resume = f.cases > 0 && !f.ended;
    } catch {
      resume = false;
    }
  }
  entry.status = 'running';
  entry.error = null;
  writeSweepState(dir, state);
  hooks.onRun?.(entry, resume ? 'resume' : 'start');
  const result = await runSession(
    {
      ...entrySpec(state, arm, entry, opts),
      out: entry.report,
      results: entry.results,
      receipt: entry.receipt,
      ...(resume ? { resume: true } : { overwrite: true }),
      ...(shared ? { shared: true } : {}),
      ...(opts.history !== undefined ? { history: opts.history } : {}),
      argv: opts.argv ?? [],
    },
    {
      ...(hooks.env ? { env: hooks.env } : {}),
      ...(hooks.onResult ? { onResult: hooks.onResult } : {}),
      ...(hooks.onStart ? { onStart: hooks.onStart } : {}),
      ...(hooks.onWarning ? { onWarning: (w: string) => hooks.onWarning!(`${entry.arm} × ${entry.suite}: ${w}`) } : {}),
      ...(hooks.signal ? { signal: hooks.signal } : {}),
    },
  );
  entry.status = 'done';
  entry.history_id = result.history_id;
  writeSweepState(dir, state);
  hooks.onRun?.(entry, 'done');
  return result;
}

/** One arm × suite's session spec with the sweep's statistics options and labels (no paths). */
function entrySpec(state: SweepState, arm: ExpandedPlan['arms'][number], entry: SweepRunEntry, opts: SweepOptions): SessionSpec {
  const spec = armSessionSpec(arm, entry.suite, state.plan_path);
  return {
    ...spec,
    ...(opts.meter_options ? { meter_options: { ...opts.meter_options, ...spec.meter_options } } : {}),
    ...(opts.bootstrap !== undefined ? { bootstrap: opts.bootstrap } : {}),
    ...(opts.bootstrap_max_units !== undefined ? { bootstrap_max_units: opts.bootstrap_max_units } : {}),
    ...(opts.idle_ms !== undefined ? { idle_ms: opts.idle_ms } : {}),
    ...(opts.store_prompts === false ? { store_prompts: false } : {}),
    labels: { sweep_id: state.id, sweep: state.plan.name, arm: entry.arm, suite: entry.suite },
  };
}

/** Stamps the sweep finished (each failed run was told to `onRun` as it failed, with its error). */
function finish(dir: string, state: SweepState): void {
  state.finished_utc = new Date().toISOString();
  writeSweepState(dir, state);
}

/** `sweep --queue`: every unfinished arm × suite becomes a job; results come back into the same files. */
async function executeOnQueue(dir: string, state: SweepState, opts: SweepOptions, hooks: SweepHooks): Promise<void> {
  const { armJobOf } = await import('../queue/arm-job.js');
  const { runArmsOnQueue } = await import('../queue/coordinator.js');
  // Refused credentials end the sweep here, before any run is marked as started.
  await (await import('../queue/connection.js')).checkQueueCredentials(opts.queue!);
  const pending = state.runs.filter((entry) => {
    if (entry.status === 'done' && existsSync(entry.report)) {
      hooks.onRun?.(entry, 'skipped');
      return false;
    }
    return true;
  });
  const arms = pending.map((entry) => {
    const arm = state.plan.arms.find((a) => a.name === entry.arm)!;
    const spec = entrySpec(state, arm, entry, opts);
    entry.status = 'running';
    entry.error = null;
    hooks.onRun?.(entry, 'start');
    return { entry, q: { job: armJobOf(state.id, `${entry.arm}`, spec, arm.where as Record<string, string> | undefined), results: entry.results, report: entry.report, receipt: entry.receipt } };
  });
  writeSweepState(dir, state);
  const done: { entry: SweepRunEntry; report: unknown; receipt: unknown }[] = [];
  const progress: QueueProgress = { runs_done: 0, runs_total: arms.length, cases_done: 0, per_worker: {} };
  await runArmsOnQueue({
    onRecord: (_arm, record, workerId) => {
      if (record.record !== 'case') return;
      progress.cases_done++;
      progress.per_worker[workerId] = (progress.per_worker[workerId] ?? 0) + 1;
      hooks.onQueueProgress?.(progress);
    },
    connection: opts.queue!,
    arms: arms.map((a) => a.q),
    ...(hooks.signal ? { signal: hooks.signal } : {}),
    onLog: (line) => hooks.onWarning?.(`queue: ${line}`),
    onArmDone: (outcome) => {
      const entry = arms.find((a) => a.q === outcome.arm)!.entry;
      progress.runs_done++;
      hooks.onQueueProgress?.(progress);
      if (outcome.result) {
        entry.status = 'done';
        done.push({ entry, report: outcome.result.report, receipt: outcome.result.receipt });
        hooks.onRun?.(entry, 'done');
      } else {
        entry.status = 'failed';
        entry.error = outcome.error;
        hooks.onRun?.(entry, 'failed');
      }
      writeSweepState(dir, state);
    },
  });
  for (const d of done) d.entry.history_id = opts.history === false ? null : await recordQueued(d.report, d.receipt, d.entry, opts, hooks);
  finish(dir, state);
}

/** Records a run that a worker did, as a local run would be recorded (the report names the worker's host). */
async function recordQueued(report: unknown, receipt: unknown, entry: SweepRunEntry, opts: SweepOptions, hooks: SweepHooks): Promise<number | null> {
  try {
    const path = (opts.history && opts.history.path) || defaultHistoryPath(hooks.env ?? process.env);
    return await History.recordOnce(
      {
        report: report as Record<string, unknown>,
        receipt: receipt as Record<string, unknown>,
        config_digest: String((receipt as { config_digest?: unknown }).config_digest ?? ''),
        paths: { report: resolve(entry.report), results: resolve(entry.results), receipt: resolve(entry.receipt) },
      },
      path,
    );
  } catch (e) {
    hooks.onWarning?.(`${entry.arm} × ${entry.suite}: not recorded in history: ${(e as Error).message.split('\n')[0]}`);
    return null;
  }
}
