import { performance } from 'node:perf_hooks';
import { Aggregator, type BenchReport } from '../core/aggregate.js';
import { MAX_CONCURRENCY, MAX_REPEAT, MAX_WARMUP } from '../core/bounds.js';
import { DEFAULT_BOOTSTRAP_MAX_UNITS, DEFAULT_RESAMPLES, isMaxUnits, maxUnitsValue, type BootstrapMaxUnits } from '../stats/bootstrap.js';
import { digestOf } from '../core/canonical.js';
import type { IdleCalibration, SuiteWindow } from '../core/energy.js';
import type { LocalPrices } from '../core/usd-parts.js';
import { JoulebenchError } from '../core/errors.js';
import type { Answer, AnswerRequest, Case, CaseResult, CaseStream, ChatMessage, Energy, Phase, PromptStorage, ResultsHeader, StreamedSuite, Suite, Target } from '../core/types.js';
import { calibrateIdle, DEFAULT_IDLE_MS } from '../meters/idle.js';
import type { PowerTrace } from '../meters/power-trace.js';
import { powerTraceLine } from './power-trace-line.js';
import type { EnergyReading, Meter, MeterWindow } from '../meters/meter.js';
import { createModelMeter } from '../meters/model.js';
import { getScorer } from '../scorers/index.js';
import { suiteDigest } from '../suites/digest.js';
import { redactQuery } from '../targets/openai/redact.js';
import { promptOf } from '../suites/prompt.js';
import { MemorySink, type ResultsSink } from './results-file.js';
import type { FinishedCases } from './resume-index.js';
import { runMeasuresLine } from './run-measures.js';

/** A monotonic clock in milliseconds; injected where timing is tested. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => performance.now() };

/** The system clock, remembering its last reading (the moment the latest case finished). */
class RecordingClock implements Clock {
  last_ms = performance.now();
  now(): number {
    return (this.last_ms = performance.now());
  }
}

export interface RunProgress {
  done: number;
  total: number;
  phase: Phase;
}

export interface RunOptions {
  /** A suite in memory, or one whose cases stream from its file (a JSONL suite: read once per pass). */
  suite: Suite | StreamedSuite;
  target: Target;
  /** Default: the `model` meter (energy the target reports itself). */
  meter?: Meter;
  /** Passes run first, recorded with `phase: "warmup"`, never scored. Default 0. */
  warmup?: number;
  /** Scored passes over the suite. Default 1. */
  repeats?: number;
  /** Where results go as they are known. Default: memory only. */
  sink?: ResultsSink;
  onResult?: (r: CaseResult, progress: RunProgress) => void;
  clock?: Clock;
  signal?: AbortSignal;
  /** Extra settings that change what is measured; they enter the config digest. */
  config?: Record<string, unknown>;
  /** Keep every scored result in `RunOutcome.results` (default true); false streams them to the sink only. */
  keepResults?: boolean;
  /** Each scored result, in case order (as `RunOutcome.results` would hold it), restored ones included. */
  onScored?: (r: CaseResult) => void;
  /** Idle calibration window before the suite, ms (default 1000); 0 skips it (net energy is then unknown). */
  idle_ms?: number;
  /** How the idle window waits; injected in tests. */
  idleWait?: (ms: number) => Promise<unknown>;
  /** Cases in flight at once (default 1); above 1 per-case windows overlap: energy attribution `shared`. */
  concurrency?: number;
  /** Continue an interrupted run (its file read by `readResumeFile`): its finished (phase, pass, index) entries are not run again. */
  resume?: { header: ResultsHeader | null; path?: string; finished: FinishedCases };
  /** Stop (E_RUN) after this many cases in a row failed at the target (default {@link DEFAULT_MAX_ERRORS}); 0 never stops. */
  max_errors?: number;
  /** Called once for the first failure of each kind (error code and HTTP status), as it happens. */
  onFirstError?: (r: CaseResult) => void;
  /** Bootstrap resamples for the report's intervals (default 2000; 0 turns the bootstrap off). */
  bootstrap?: number;
  /** The most cases the intervals are bootstrapped over (default 20,000; `'inf'`: any number; 0: never). */
  bootstrap_max_units?: BootstrapMaxUnits;
  /** Other work shares the hardware (a sweep's parallel arms): energy attribution is `shared`. */
  shared?: boolean;
  /** Resample clusters for the intervals: `question` (a case with its passes and turns) or `subject` (its dataset). */
  cluster?: 'question' | 'subject';
  /** Electricity and hardware prices: the report's dollars in parts (docs/report.md). */
  prices?: LocalPrices;
  /** `--pue`: the facility's PUE, for the report's modelled facility layer. */
  pue?: number;
  /** `--power-trace`: a power time series over idle, warmup and scored passes, embedded (downsampled) in the report. */
  trace?: PowerTrace;
  /** Where the prompts are kept (the header's `prompts`): `text` writes each case's prompt in its line. Absent: not said, none written. */
  prompts?: PromptStorage;
}

/** Consecutive target failures that stop a run unless `max_errors` says otherwise. */
export const DEFAULT_MAX_ERRORS = 20;

/** What the runner measured around the cases, for the report and the receipt. */
export interface RunEnergy {
  idle: IdleCalibration;
  /** One window around all scored passes; `null` when the meter opens no windows (`model`). */
  suite: EnergyReading | null;
  /** Whether the report's gross total is the suite window (else the sum of the target's own figures). */
  gross_from: 'suite-window' | 'cases';
}

export interface RunOutcome {
  report: BenchReport;
  header: ResultsHeader;
  /** Scored results in order (empty when `keepResults` is false). */
  results: CaseResult[];
  energy: RunEnergy;
}

/** Walks every case through the target, warmup passes first, then the scored passes, and aggregates the scored ones. */
export async function run(opts: RunOptions): Promise<RunOutcome> {
  const { suite, target } = opts;
  const meter = opts.meter ?? createModelMeter();
  const warmup = checkCount(opts.warmup ?? 0, 'warmup', 0, MAX_WARMUP);
  const repeats = checkCount(opts.repeats ?? 1, 'repeats', 1, MAX_REPEAT);
  const concurrency = checkCount(opts.concurrency ?? 1, 'concurrency', 1, MAX_CONCURRENCY);
  // The system clock's last reading doubles as the results file's notion of now (one clock read a case fewer).
  const recording = opts.clock === undefined || opts.clock === systemClock ? new RecordingClock() : null;
  const clock = recording ?? opts.clock!;
  const sink: ResultsSink = opts.sink ?? new MemorySink();
  const suiteScorer = getScorer(suite.scorer);
  // Cases come a batch at a time: a suite in memory is one batch, a streamed one is read again each pass.
  const source: CaseStream = 'stream' in suite ? suite.stream : { count: suite.cases.length, batches: () => [suite.cases] };
  const count = source.count;
  // Before anything is recorded: a meter that cannot read stops the run, and `auto` settles what it measures with.
  const probe = await meter.probe();
  if (!probe.available) {
    throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  }

  const digest = 'stream' in suite ? suite.digest : suiteDigest(suite);
  const header: ResultsHeader = {
    record: 'header',
    format: 'joulebench-results/1',
    suite: suite.name,
    suite_version: suite.version,
    suite_digest: digest,
    target: target.id,
    config_digest: configDigest(target, meter, warmup, repeats, concurrency === 1 ? opts.config : { ...opts.config, concurrency }),
    warmup,
    repeats,
    meter: meter.id,
    cases: count,
    concurrency,
    // What else the report depends on, so a report rebuilt from this file is the run's own (src/report/rebuild.ts).
    ...(opts.bootstrap !== undefined && opts.bootstrap !== DEFAULT_RESAMPLES ? { bootstrap: opts.bootstrap } : {}),
    ...(opts.bootstrap_max_units !== undefined && checkMaxUnits(opts.bootstrap_max_units) !== DEFAULT_BOOTSTRAP_MAX_UNITS ? { bootstrap_max_units: opts.bootstrap_max_units } : {}),
    ...(opts.shared ? { shared: true } : {}),
    ...(opts.cluster !== undefined ? { cluster: opts.cluster } : {}),
    ...(opts.prices !== undefined ? { prices: opts.prices } : {}),
    ...(opts.prompts !== undefined ? { prompts: opts.prompts } : {}),
  };
  const finished = resumeIndex(opts.resume, header);
  // A file written before prompts were kept goes on without them, as it began.
  const keepPrompts = opts.prompts === 'text' && (opts.resume?.header == null || opts.resume.header.prompts === 'text');
  // After the probe: it is what settles whether `auto` prefers the target's energy.
  const ctx: CaseContext = { target, meter, clock, signal: opts.signal, preferTarget: meter.prefersTargetEnergy === true, keepPrompts };
  if (opts.resume?.header) {
    // The target's state is rebuilt by replaying the finished answers into it, or else by one re-warm pass (below).
    const how = target.restore ? 'restore' : warmup > 0 ? 'rewarm' : 'none';
    sink.note?.({ record: 'resume', finished: finished.size, state: how });
  } else {
    sink.header(header);
  }
  let rewarmDue = opts.resume?.header != null && !target.restore && warmup > 0 && finished.size > 0;

  const keep = opts.keepResults ?? true;
  await opts.trace?.begin('idle');
  const idle = await calibrateIdle(meter, checkCount(opts.idle_ms ?? DEFAULT_IDLE_MS, 'idle_ms', 0), opts.idleWait);
  const opensWindows = !meter.usesTargetEnergy;
  let suiteWindow: MeterWindow | null = null;
  let suiteReading: EnergyReading | null = null;
  // Scored cases whose energy came from the meter's window rather than the target (auto's fallback).
  let fromWindow = 0;
  const scored: CaseResult[] = [];
  const agg = new Aggregator({ concurrency, ...(opts.shared ? { shared: true } : {}), ...(opts.cluster !== undefined ? { cluster: opts.cluster } : {}) });
  const total = (warmup + repeats) * count;
  let done = 0;
  const passes: [Phase, number][] = [
    ...Array.from({ length: warmup }, (_, i): [Phase, number] => ['warmup', i]),
    ...Array.from({ length: repeats }, (_, i): [Phase, number] => ['scored', i]),
  ];
  // Scored results taken from an interrupted run's file: the suite window did not see them.
  let restoredScored = 0;
  /** When the first scored pass started (wall clock for throughput), ms. */
  let scoredStart_ms: number | null = null;

  const maxErrors = checkCount(opts.max_errors ?? DEFAULT_MAX_ERRORS, 'max_errors', 0);
  const errorKinds = new Set<string>();
  let consecutiveErrors = 0;
  /** Set when `max_errors` consecutive failures were seen: no new case starts, the run stops with it. */
  let stopReason: string | null = null;
  const noteError = (r: CaseResult): void => {
    if (r.error === null) {
      consecutiveErrors = 0;
      return;
    }
    consecutiveErrors++;
    const kind = `${r.error.code}:${r.error.status ?? ''}`;
    if (!errorKinds.has(kind)) {
      errorKinds.add(kind);
      opts.onFirstError?.(r);
    }
    if (maxErrors > 0 && consecutiveErrors >= maxErrors && stopReason === null) {
      stopReason = `stopped after ${consecutiveErrors} consecutive failures at the target (max_errors ${maxErrors}); the last: ${r.error.code}${r.error.status ? ` (HTTP ${r.error.status})` : ''}: ${r.error.message}`;
    }
  };

  const settle = (r: CaseResult, c: Case, phase: Phase): CaseResult => {
    noteError(r);
    const scorer = c.scorer === undefined ? suiteScorer : getScorer(c.scorer);
    const verdict = r.error === null ? scorer.score(c, r.response ?? '') : null;
    r.passed = verdict ? verdict.passed : c.expected === null ? null : false;
    r.score = verdict?.score ?? null;
    // The letter (or whatever the scorer read) is kept, so a reader sees why a case was wrong.
    if (verdict?.extracted !== undefined) r.parsed = verdict.extracted;
    // With no meter window to close, the clock's last reading is when this result was known.
    sink.write(r, opensWindows ? undefined : recording?.last_ms);
    done++;
    opts.onResult?.(r, { done, total, phase });
    return r;
  };
  /** One case of one pass: taken from the interrupted run's file when it finished there, else run. */
  const step = (phase: Phase, pass: number, index: number, c: Case, prompt: string): CaseResult | Promise<CaseResult> => {
    const recorded = finished.size === 0 ? undefined : finished.get(phase, pass, index);
    if (recorded) {
      if (recorded.case_id !== c.id) {
        throw new JoulebenchError(
          'E_RESULTS',
          `${opts.resume?.path ?? 'results'}: ${phase} pass ${pass} index ${index} is case "${recorded.case_id}", the suite has "${c.id}"`,
        );
      }
      target.restore?.({ prompt, case: c }, recorded);
      if (phase === 'scored') restoredScored++;
      done++;
      opts.onResult?.(recorded, { done, total, phase });
      return recorded;
    }
    return runCase(ctx, c, prompt, index, phase, pass, settle);
  };
  // A target that answers synchronously would hold the event loop for the whole run, and no timer
  // (the results flush, the progress bar) or signal handler could run: give way every ~20 ms.
  let lastTurn = performance.now();
  const giveWay = (): Promise<void> | null => {
    const now = recording ? recording.last_ms : performance.now();
    if (now - lastTurn < YIELD_EVERY_MS) return null;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        lastTurn = performance.now();
        resolve();
      }),
    );
  };
  const collect = (r: CaseResult) => {
    agg.add(r);
    if (r.energy_source === meter.source) fromWindow++;
    if (keep) scored.push(r);
    opts.onScored?.(r);
  };

  // The prompts of a batch, as sent; a suite in memory hands over the same array every pass: made once.
  let promptsBatch: readonly Case[] | null = null;
  let promptsCached: string[] = [];
  const promptsFor = (batch: readonly Case[]): string[] => {
    if (batch !== promptsBatch) {
      promptsBatch = batch;
      promptsCached = batch.map(promptOf);
    }
    return promptsCached;
  };

  for (const [phase, pass] of passes) {
    const firstRun = finished.size === 0 ? 0 : finished.firstMissing(phase, pass, count);
    // A warmup case run in this process warms the target itself: no extra pass needed.
    if (firstRun >= 0 && phase === 'warmup') rewarmDue = false;
    if (firstRun >= 0 && phase === 'scored' && rewarmDue) {
      // Before the suite window opens, so the re-warm's energy never counts.
      rewarmDue = false;
      let base = 0;
      for (const batch of source.batches()) {
        for (let j = 0; j < batch.length; j++) {
          const w = await runCase(ctx, batch[j]!, promptOf(batch[j]!), base + j, 'warmup', 0);
          sink.note?.({ ...w, record: 'rewarm' });
        }
        base += batch.length;
      }
    }
    await opts.trace?.phase(phase);
    if (phase === 'scored' && scoredStart_ms === null) scoredStart_ms = clock.now();
    // The whole scored part is also one window, so short (below-floor) cases still add up honestly.
    if (phase === 'scored' && opensWindows && suiteWindow === null && firstRun >= 0) suiteWindow = await meter.start();
    let base = 0;
    for (const batch of source.batches()) {
      const prompts = promptsFor(batch);
      if (concurrency > 1) {
        const slots = await concurrentPass(batch.length, concurrency, opts.signal, (j) => step(phase, pass, base + j, batch[j]!, prompts[j]!), giveWay, () => stopReason !== null);
        if (stopReason !== null) throw stopped(stopReason, sink);
        // Aggregated in case order, so the report does not depend on which case finished first.
        if (phase === 'scored') slots.forEach(collect);
        else slots.forEach((r) => agg.add(r)); // warmup: only what it billed is kept
        base += batch.length;
        continue;
      }
      for (let j = 0; j < batch.length; j++) {
        if (opts.signal?.aborted) throw new JoulebenchError('E_RUN', 'run aborted');
        const s = step(phase, pass, base + j, batch[j]!, prompts[j]!);
        const r = s instanceof Promise ? await s : s;
        if (phase === 'scored') collect(r);
        else agg.add(r); // warmup: only what it billed is kept
        if (stopReason !== null) throw stopped(stopReason, sink);
        const turn = giveWay();
        if (turn) await turn;
      }
      base += batch.length;
    }
  }

  const scoredWall_ms = scoredStart_ms === null ? null : clock.now() - scoredStart_ms;
  if (suiteWindow) suiteReading = await suiteWindow.stop();
  await opts.trace?.end();
  const traced = opts.trace?.summary();
  if (traced) sink.note?.(powerTraceLine(traced));

  // With target energy preferred (auto's fallback), the window is the total only when some case needed it.
  const allFromTarget = meter.prefersTargetEnergy === true && fromWindow === 0;
  // A resumed run's window saw only the cases run in this process, so it cannot be the total then.
  const gross_from: RunEnergy['gross_from'] = suiteReading && !allFromTarget && restoredScored === 0 ? 'suite-window' : 'cases';
  const suiteUsed = gross_from === 'suite-window' && suiteReading ? toSuiteWindow(suiteReading) : null;
  // No throughput for a resumed run (its wall time covers only this process's cases), nor for a sequential
  // run of a deterministic target with its own energies (its report is byte-identical run to run).
  const timeless = concurrency <= 1 && target.deterministic === true && meter.usesTargetEnergy === true;
  const wallUsed = restoredScored === 0 && !timeless ? scoredWall_ms : null;
  // What the report takes from beyond the cases, so `report FILE` gives this report (src/runner/run-measures.ts).
  sink.note?.(runMeasuresLine(idle, suiteUsed, wallUsed, opts.pue));
  // The run finished: a reader (or a later `run` on the same file) can tell a complete file from an interrupted one.
  sink.note?.({ record: 'end', scored: agg.scoredCount });
  sink.flush?.();

  const report = agg.report({
    suite: { name: suite.name, version: suite.version, digest },
    target: target.id,
    meter: meter.id,
    warmup,
    repeats,
    concurrency,
    ...(opts.bootstrap !== undefined ? { bootstrap: checkCount(opts.bootstrap, 'bootstrap', 0) } : {}),
    ...(opts.bootstrap_max_units !== undefined ? { bootstrap_max_units: opts.bootstrap_max_units } : {}),
    ...(opts.shared ? { shared: true } : {}),
    ...(opts.cluster !== undefined ? { cluster: opts.cluster } : {}),
    ...(opts.prices !== undefined ? { prices: opts.prices } : {}),
    energy: { idle, suite: suiteUsed },
    scored_wall_ms: wallUsed,
    ...(opts.pue !== undefined ? { pue: opts.pue } : {}),
  });
  if (traced) report.power_trace = traced;
  return { report, header, results: scored, energy: { idle, suite: suiteReading, gross_from } };
}

/** Runs `step` over indices 0..n-1 with at most `concurrency` in flight; the results in index order. */
async function concurrentPass(
  n: number,
  concurrency: number,
  signal: AbortSignal | undefined,
  step: (index: number) => CaseResult | Promise<CaseResult>,
  giveWay: () => Promise<void> | null,
  halted: () => boolean,
): Promise<CaseResult[]> {
  const slots: CaseResult[] = new Array(n);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n && !halted()) {
      if (signal?.aborted) throw new JoulebenchError('E_RUN', 'run aborted');
      const index = next++;
      slots[index] = await step(index);
      const turn = giveWay();
      if (turn) await turn;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return slots;
}

/** The run stops at `max_errors`: what is buffered is written, and the reason is the error's message. */
function stopped(reason: string, sink: ResultsSink): JoulebenchError {
  sink.flush?.();
  return new JoulebenchError('E_RUN', reason);
}

export function toSuiteWindow(r: EnergyReading): SuiteWindow {
  const w: SuiteWindow = { joules: r.joules, source: r.source, by_domain: r.by_domain, window_ms: r.window_ms, below_floor: r.below_floor };
  if (r.validity) w.validity = r.validity;
  return w;
}

/** How often a run of synchronous answers gives the event loop a turn, ms. */
const YIELD_EVERY_MS = 20;

/** What every case of a run is run with (made once a run). */
interface CaseContext {
  target: Target;
  meter: Meter;
  clock: Clock;
  signal: AbortSignal | undefined;
  /** The meter prefers the target's own energy figure to its window (auto without counters). */
  preferTarget: boolean;
  /** Each case line keeps the prompt it was sent (`prompts: "text"`). */
  keepPrompts: boolean;
}

function requestFor(ctx: CaseContext, c: Case, prompt: string, messages?: ChatMessage[]): AnswerRequest {
  const req: AnswerRequest = ctx.signal ? { prompt, case: c, signal: ctx.signal } : { prompt, case: c };
  if (messages) req.messages = messages;
  return req;
}

/** Whether a case is asked as a conversation: several turns, and a chat target that takes messages. */
function asConversation(ctx: CaseContext, c: Case): boolean {
  return ctx.target.conversational === true && c.turns !== undefined && c.turns.length > 1;
}

/**
 * A multi-turn case asked as MT-Bench asks it: each turn after the conversation so far (the model's own
 * earlier answers), its own request and meter window. A failed turn ends the conversation.
 */
async function runConversation(ctx: CaseContext, c: Case, index: number, phase: Phase, pass: number): Promise<CaseResult> {
  const turns = c.turns!;
  const messages: ChatMessage[] = [];
  const parts: CaseResult[] = [];
  for (const turn of turns) {
    messages.push({ role: 'user', content: turn });
    const sent = messages.slice();
    const part = await runMeteredCase(ctx, c, turn, index, phase, pass, sent);
    parts.push(part);
    if (part.error !== null || part.response === null) break;
    messages.push({ role: 'assistant', content: part.response });
  }
  return combineTurns(parts);
}

/** Sums a conversation's turns into one case result; a figure unknown for any turn is unknown (null) for the case. */
function combineTurns(parts: CaseResult[]): CaseResult {
  const last = parts[parts.length - 1]!;
  const sum = (f: (r: CaseResult) => number | null): number | null => {
    let t = 0;
    for (const p of parts) {
      const v = f(p);
      if (v === null) return null;
      t += v;
    }
    return t;
  };
  const sources = new Set(parts.map((p) => p.energy_source));
  const joules = sum((p) => p.joules);
  const r: CaseResult = {
    ...parts[0]!,
    response: last.response,
    stage: last.stage,
    joules,
    energy_source: joules === null ? 'none' : sources.size === 1 ? last.energy_source : 'mixed',
    below_floor: parts.some((p) => p.below_floor),
    latency_ms: Math.round(parts.reduce((t, p) => t + p.latency_ms, 0) * 1000) / 1000,
    ttft_ms: parts[0]!.ttft_ms,
    tpot_ms: null,
    prompt_tokens: sum((p) => p.prompt_tokens),
    completion_tokens: sum((p) => p.completion_tokens),
    cost_usd: sum((p) => p.cost_usd),
    // 1 + every turn's re-sends: a fault-free conversation is 1 attempt, so `retries` counts retries only.
    attempts: parts.reduce((t, p) => t + p.attempts - 1, 1),
    retry_overhead_ms: Math.round(parts.reduce((t, p) => t + p.retry_overhead_ms, 0) * 1000) / 1000,
    error: parts.find((p) => p.error !== null)?.error ?? null,
  };
  for (const k of ['cached_prompt_tokens', 'reasoning_tokens'] as const) {
    const v = parts.every((p) => p[k] !== undefined) ? sum((p) => p[k]!) : null;
    if (v === null) delete r[k];
    else r[k] = v;
  }
  // Per-domain figures and target facts are per request: they stay with their turn, not summed here.
  delete r.by_domain;
  delete r.meta;
  delete r.trace;
  delete r.prompt;
  r.turns = parts.map((p) => ({
    response: p.response,
    latency_ms: p.latency_ms,
    ttft_ms: p.ttft_ms,
    prompt_tokens: p.prompt_tokens,
    completion_tokens: p.completion_tokens,
    joules: p.joules,
    energy_source: p.energy_source,
    cost_usd: p.cost_usd,
    attempts: p.attempts,
    error: p.error,
  }));
  // The last request's messages: every turn asked, with the answers before it.
  if (last.prompt !== undefined) r.prompt = last.prompt;
  return r;
}

/** What the runner does with a finished case (score, write, count); runCase calls it in the same step. */
type Finish = (r: CaseResult, c: Case, phase: Phase) => CaseResult;
const AS_IS: Finish = (r) => r;

/**
 * Runs one case and hands its result to `finish`: synchronously when no meter window is opened and the
 * target answers synchronously (no promise, no microtask on a microsecond case).
 */
function runCase(ctx: CaseContext, c: Case, prompt: string, index: number, phase: Phase, pass: number, finish: Finish = AS_IS): CaseResult | Promise<CaseResult> {
  if (c.turns !== undefined && asConversation(ctx, c)) return runConversation(ctx, c, index, phase, pass).then((r) => finish(r, c, phase));
  if (!ctx.meter.usesTargetEnergy) return runMeteredCase(ctx, c, prompt, index, phase, pass).then((r) => finish(r, c, phase));
  const { clock, preferTarget } = ctx;
  const kept = ctx.keepPrompts ? prompt : undefined;
  const t0 = clock.now();
  let pending: Answer | Promise<Answer>;
  try {
    pending = ctx.target.answer(requestFor(ctx, c, prompt));
  } catch (e) {
    return finish(caseResult(c, index, phase, pass, null, e, clock.now() - t0, null, preferTarget, kept), c, phase);
  }
  // An Answer always has its text; only something without one can be another library's promise.
  if (pending instanceof Promise || (pending != null && typeof (pending as Partial<Answer>).text !== 'string' && isThenable(pending))) {
    return Promise.resolve(pending).then(
      (answer) => finish(caseResult(c, index, phase, pass, answer, NO_FAILURE, clock.now() - t0, null, preferTarget, kept), c, phase),
      (failure: unknown) => finish(caseResult(c, index, phase, pass, null, failure, clock.now() - t0, null, preferTarget, kept), c, phase),
    );
  }
  return finish(caseResult(c, index, phase, pass, pending, NO_FAILURE, clock.now() - t0, null, preferTarget, kept), c, phase);
}

/** A case, inside its own meter window when the meter opens them (opened before the ask, closed after the answer). */
async function runMeteredCase(
  ctx: CaseContext,
  c: Case,
  prompt: string,
  index: number,
  phase: Phase,
  pass: number,
  messages?: ChatMessage[],
): Promise<CaseResult> {
  const window = ctx.meter.usesTargetEnergy ? null : await ctx.meter.start();
  let answer: Answer | null = null;
  let failure: unknown = NO_FAILURE;
  const t0 = ctx.clock.now();
  try {
    answer = await ctx.target.answer(requestFor(ctx, c, prompt, messages));
  } catch (e) {
    failure = e;
  }
  const elapsed_ms = ctx.clock.now() - t0;
  const reading = window ? await window.stop() : null;
  return caseResult(c, index, phase, pass, answer, failure, elapsed_ms, reading, ctx.preferTarget, ctx.keepPrompts ? (messages ?? prompt) : undefined);
}

const NONE_FAILED = Object.freeze({});

/** A promise, native or not (a target may use any promise library). */
function isThenable<T>(x: T | PromiseLike<T>): x is PromiseLike<T> {
  return typeof (x as { then?: unknown } | null)?.then === 'function';
}

/** `failure` when the target did not throw (a target may throw anything, `undefined` included). */
export const NO_FAILURE = Symbol('no failure');

/** The CaseResult for one finished case, unscored (`passed` and `score` are set by the runner). */
export function caseResult(
  c: Case,
  index: number,
  phase: Phase,
  pass: number,
  answer: Answer | null,
  failure: unknown,
  elapsed_ms: number,
  reading: EnergyReading | null,
  preferTarget: boolean,
  /** The prompt as sent, kept in the line (`prompts: "text"`). */
  prompt?: string | ChatMessage[],
): CaseResult {
  const failedOutright = failure !== NO_FAILURE;
  const error = failedOutright ? toCaseError(failure) : null;
  // A target that gives up after retries says how many attempts it made and what they cost.
  const failed = (failedOutright ? (failure ?? {}) : NONE_FAILED) as { attempts?: unknown; retry_overhead_ms?: unknown };
  // The successful attempt's latency alone: failed attempts and backoff are reported apart (retry_overhead_ms).
  const overhead_ms = answer?.retry_overhead_ms ?? (typeof failed.retry_overhead_ms === 'number' ? failed.retry_overhead_ms : 0);
  const latency_ms = Math.max(0, elapsed_ms - overhead_ms);
  const energy = energyOf(answer, reading, preferTarget);

  const r: CaseResult = {
    record: 'case',
    phase,
    pass,
    index,
    case_id: c.id,
    dataset: c.dataset,
    response: answer?.text ?? null,
    // `==`: a target may hand back nothing at all (no answer, no stage).
    // The stage that answered: a cascade names it; a target that names none is one model, counted `neural`.
    stage: answer == null ? null : (answer.stage ?? 'neural'),
    expected: c.expected,
    passed: null,
    score: null,
    weight: c.weight,
    joules: energy.joules,
    energy_source: energy.joules === null ? 'none' : energy.source,
    below_floor: energy.below_floor ?? false,
    latency_ms: Math.round(latency_ms * 1000) / 1000,
    ttft_ms: answer?.ttft_ms ?? null,
    tpot_ms: answer?.tpot_ms ?? null,
    prompt_tokens: answer?.usage?.prompt_tokens ?? null,
    completion_tokens: answer?.usage?.completion_tokens ?? null,
    cost_usd: answer?.cost_usd ?? null,
    attempts: answer?.attempts ?? (typeof failed.attempts === 'number' ? failed.attempts : 1),
    retry_overhead_ms: overhead_ms,
    error,
  };
  if (answer?.usage?.cached_prompt_tokens != null) r.cached_prompt_tokens = answer.usage.cached_prompt_tokens;
  if (answer?.usage?.reasoning_tokens != null) r.reasoning_tokens = answer.usage.reasoning_tokens;
  if (energy === reading && reading.validity?.valid === false) r.energy_invalid = reading.validity.reasons.join('; ');
  if (energy.by_domain && Object.keys(energy.by_domain).length > 0) r.by_domain = energy.by_domain;
  if (energy.range_j && energy.joules !== null) r.joules_range = { low: energy.range_j.low, high: energy.range_j.high };
  if (answer?.itl_ms) r.itl_ms = answer.itl_ms;
  if (answer?.trace) r.trace = answer.trace;
  if (answer?.meta) r.meta = typeof r.completion_tokens === 'number' ? withEnergyPerToken(answer.meta, r.joules, r.completion_tokens) : answer.meta;
  if (prompt !== undefined) r.prompt = prompt;
  return r;
}

/** Joules per output token and output tokens per joule of the case; `null` when either is unknown or 0. */
function withEnergyPerToken(meta: Record<string, unknown>, joules: number | null, tokens: number): Record<string, unknown> {
  const known = joules !== null && joules > 0 && tokens > 0;
  // Object.assign, not a spread literal (a V8 slow path, `npm run bench:http`); they differ only for an own `__proto__` key.
  const out: Record<string, unknown> = Object.hasOwn(meta, '__proto__') ? { ...meta } : Object.assign({}, meta);
  out.j_per_output_token = known ? joules / tokens : null;
  out.output_tokens_per_j = known ? tokens / joules : null;
  return out;
}

function energyOf(answer: Answer | null, reading: EnergyReading | null, preferTarget: boolean): Energy {
  if (preferTarget && answer?.energy && answer.energy.joules !== null) return answer.energy;
  if (reading) return reading;
  return answer?.energy ?? { joules: null, source: 'none' };
}

/** A target's failure as recorded: code, status, one-line message. Targets redact secrets before throwing. */
function toCaseError(e: unknown): NonNullable<CaseResult['error']> {
  const err = e as { code?: unknown; status?: unknown; message?: unknown };
  const out: NonNullable<CaseResult['error']> = {
    code: typeof err?.code === 'string' ? err.code : 'E_TARGET',
    // Every target's message: a credential in an endpoint's query string never reaches the results file.
    message: redactQuery(String(err?.message ?? e).split('\n')[0] ?? ''),
  };
  if (typeof err?.status === 'number') out.status = err.status;
  return out;
}

/** Digest of everything that changes what is measured besides the cases: target, meter, passes, extras. */
export function configDigest(
  target: Target,
  meter: Meter,
  warmup: number,
  repeats: number,
  extra?: Record<string, unknown>,
): string {
  return digestOf({ target: target.describe(), meter: meter.id, warmup, repeats, extra: extra ?? {} });
}

/** A unit limit (`bootstrap_max_units`) as a number, or E_USAGE naming it. */
function checkMaxUnits(v: BootstrapMaxUnits): number {
  if (!isMaxUnits(v)) throw new JoulebenchError('E_USAGE', `bootstrap_max_units must be a whole number >= 0 or "inf", got ${String(v)}`);
  return maxUnitsValue(v);
}

export function checkCount(n: number, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(n) || n < min) throw new JoulebenchError('E_USAGE', `${name} must be an integer >= ${min}, got ${n}`);
  if (n > max) throw new JoulebenchError('E_USAGE', `${name} must be <= ${max}, got ${n}`);
  return n;
}

/**
 * The finished results of an interrupted run, by (phase, pass, index). Refuses (E_RESULTS, exit 2) a file
 * written for other cases or another configuration.
 */
function resumeIndex(resume: RunOptions['resume'], header: ResultsHeader): FinishedLookup {
  if (!resume?.header) return NOTHING_FINISHED;
  const file = resume.path ?? 'results file';
  const old = resume.header;
  if (old.suite_digest !== header.suite_digest) {
    throw new JoulebenchError(
      'E_RESULTS',
      `${file}: cannot resume: it was written for suite "${old.suite}" ${old.suite_digest}, this run's suite "${header.suite}" is ${header.suite_digest} (different cases)`,
    );
  }
  if (old.config_digest !== header.config_digest) {
    const diffs = (['target', 'meter', 'warmup', 'repeats', 'concurrency'] as const)
      .filter((k) => (old[k] ?? 1) !== (header[k] ?? 1)) // only concurrency can be absent (older files): it was 1
      .map((k) => `${k} ${String(old[k] ?? 1)} → ${String(header[k] ?? 1)}`);
    throw new JoulebenchError(
      'E_RESULTS',
      `${file}: cannot resume: it was written with config ${old.config_digest}, this run's is ${header.config_digest}` +
        (diffs.length ? ` (${diffs.join(', ')})` : ' (target settings differ)'),
    );
  }
  // The report depends on these too (the header records them so a rebuilt report is the run's own):
  // resuming with other values would give a report that no rebuild of the file reproduces.
  const units = (v: unknown): number => (v === undefined ? DEFAULT_BOOTSTRAP_MAX_UNITS : isMaxUnits(v) ? maxUnitsValue(v) : NaN);
  const shapes = [
    ['bootstrap', '--bootstrap', old.bootstrap ?? DEFAULT_RESAMPLES, header.bootstrap ?? DEFAULT_RESAMPLES],
    ['bootstrap_max_units', '--bootstrap-max-units', units(old.bootstrap_max_units), units(header.bootstrap_max_units)],
    ['shared', '--parallel-arms', old.shared ?? false, header.shared ?? false],
    ['cluster', '--cluster', old.cluster ?? 'case', header.cluster ?? 'case'],
    ['prices', '--electricity-usd-per-kwh and --hardware-usd-per-hour', JSON.stringify(old.prices ?? {}), JSON.stringify(header.prices ?? {})],
  ] as const;
  for (const [key, flag, was, now] of shapes) {
    if (!Object.is(was, now)) {
      throw new JoulebenchError('E_RESULTS', `${file}: cannot resume: it was written with ${key} ${String(was)}, this run's is ${String(now)} (its report depends on it: give the same ${flag})`);
    }
  }
  // Kept prompts or not, the file is one or the other throughout (a file without the key, written before
  // prompts were kept, goes on without them).
  if (old.prompts !== undefined && old.prompts !== header.prompts) {
    const fix = old.prompts === 'none' ? 'it was run with --no-store-prompts: give it again' : header.prompts === 'none' ? 'its case lines hold prompts: drop --no-store-prompts' : 'give the same suite and flags';
    throw new JoulebenchError('E_RESULTS', `${file}: cannot resume: it was written with prompts ${old.prompts}, this run's are ${header.prompts ?? 'not said'} (${fix})`);
  }
  if (resume.finished.outside) throw new JoulebenchError('E_RESULTS', resume.finished.outside);
  return resume.finished;
}

/** What the runner asks of an interrupted run's finished cases (indexed on disk: resume-index.ts). */
export interface FinishedLookup {
  /** How many distinct (phase, pass, index) finished. */
  readonly size: number;
  /** The recorded result of a finished case, or undefined. */
  get(phase: Phase, pass: number, index: number): CaseResult | undefined;
  /** The first index below `n` of this pass that did not finish; -1 when all did. */
  firstMissing(phase: Phase, pass: number, n: number): number;
  /** Why the file cannot be this suite's run (a case line past its cases), once it is known to be: refused then. */
  readonly outside?: string | null;
}

const NOTHING_FINISHED: FinishedLookup = { size: 0, get: () => undefined, firstMissing: (_p, _q, n) => (n > 0 ? 0 : -1) };
