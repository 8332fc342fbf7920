import { performance } from 'node:perf_hooks';
import { Aggregator, type BenchReport } from '../core/aggregate.js';
import type { LocalPrices } from '../core/usd-parts.js';
import type { IdleCalibration } from '../core/energy.js';
import { JoulebenchError } from '../core/errors.js';
import type { Answer, AnswerRequest, Case, CaseResult, ChatMessage, Phase, PromptStorage, ResultsHeader, Suite, Target } from '../core/types.js';
import { calibrateIdle, DEFAULT_IDLE_MS } from '../meters/idle.js';
import type { EnergyReading, Meter, MeterWindow } from '../meters/meter.js';
import type { PowerTrace } from '../meters/power-trace.js';
import { powerTraceLine } from '../runner/power-trace-line.js';
import { caseResult, checkCount, configDigest, NO_FAILURE, toSuiteWindow, type RunProgress } from '../runner/run.js';
import type { ResultsSink } from '../runner/results-file.js';
import { getScorer } from '../scorers/index.js';
import { suiteDigest } from '../suites/digest.js';
import { promptOf } from '../suites/prompt.js';
import { buildLoadBlock, type LoadBlock } from './block.js';
import { LoadColumns } from './columns.js';
import { loadRecordOf, type LoadMeta } from './record.js';
import { rateLabel, type LoadOptions } from './options.js';
import { planSchedule } from './schedule.js';
import { loadedTokenizer } from './tokenizer.js';
import type { WindowReading } from './steady.js';

export { loadRecordOf, type LoadMeta };

interface LoadRunOptions {
  suite: Suite;
  target: Target;
  meter: Meter;
  sink: ResultsSink;
  load: LoadOptions;
  /** Sequential unscored passes over the suite before the schedule starts (recorded, never scored). */
  warmup?: number;
  idle_ms?: number;
  signal?: AbortSignal;
  onResult?: (r: CaseResult, progress: RunProgress) => void;
  /** Electricity and hardware prices: the report's dollars in parts, as for a closed-loop run. */
  prices?: LocalPrices;
  /** Where the prompts are kept (the header's `prompts`): `text` writes each request's prompt (a turn's messages) in its line. */
  prompts?: PromptStorage;
  /** `--pue`: the facility's PUE, for the report's modelled facility layer. */
  pue?: number;
  /** `--power-trace`: a power time series over warmup, idle, the run and its steady-state window. */
  trace?: PowerTrace;
}

type LoadReport = BenchReport & { load: LoadBlock };

interface LoadOutcome {
  report: LoadReport;
  header: ResultsHeader;
  idle: IdleCalibration;
  run: EnergyReading | null;
}

/**
 * An open-loop load run (docs/load.md): requests leave on a planned schedule whatever earlier ones are doing,
 * at most `max_concurrency` in flight; one meter window covers the run, a second the steady state (ML.ENERGY).
 */
export async function runLoad(o: LoadRunOptions): Promise<LoadOutcome> {
  const { suite, target, meter, sink, load } = o;
  if (suite.cases.length === 0) throw new JoulebenchError('E_USAGE', 'a load run needs at least one case');
  checkCount(load.num_requests, 'num_requests', 1);
  if (load.max_concurrency !== null) checkCount(load.max_concurrency, 'max_concurrency', 1);
  const warmup = checkCount(o.warmup ?? 0, 'warmup', 0);
  const probe = await meter.probe();
  if (!probe.available) {
    throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  }
  const scorer = getScorer(suite.scorer);
  const prompts = suite.cases.map(promptOf);
  const n = suite.cases.length;
  const passes = Math.ceil(load.num_requests / n);
  const loadForDigest = { ...load, request_rate: rateLabel(load.request_rate) };
  const header: ResultsHeader & { load: typeof loadForDigest } = {
    record: 'header',
    format: 'joulebench-results/1',
    suite: suite.name,
    suite_version: suite.version,
    suite_digest: suiteDigest(suite),
    target: target.id,
    config_digest: configDigest(target, meter, warmup, passes, { load: loadForDigest }),
    warmup,
    repeats: passes,
    meter: meter.id,
    cases: n,
    concurrency: load.max_concurrency ?? load.num_requests,
    load: loadForDigest,
    ...(o.prices ? { prices: o.prices } : {}),
    ...(o.prompts !== undefined ? { prompts: o.prompts } : {}),
  };
  sink.header(header);
  const keep = o.prompts === 'text';
  // With --think-time-ms a multi-turn case is a conversation: arrival i sends its turns one after another,
  // request number i·K + turn (K = the most turns of any case), each turn a request of its own.
  const think = load.think_time_ms;
  // A dataset conversation (turn_max_tokens) is one even with a single turn.
  const talks = (c: Case): boolean => think !== undefined && target.conversational === true && c.turns !== undefined && (c.turns.length > 1 || c.turn_max_tokens !== undefined);
  const turnsOf = (c: Case): number => (talks(c) ? c.turns!.length : 1);
  const K = suite.cases.reduce((k, c) => Math.max(k, turnsOf(c)), 1);
  let plannedRequests = 0;
  for (let i = 0; i < load.num_requests; i++) plannedRequests += turnsOf(suite.cases[i % n]!);
  const conversations = { count: 0, turns: 0 };
  const total = warmup * n + plannedRequests;
  let done = 0;
  const settle = (r: CaseResult, phase: Phase): CaseResult => {
    const c = suite.cases[r.index]!;
    const verdict = r.error === null ? scorer.score(c, r.response ?? '') : null;
    r.passed = verdict ? verdict.passed : c.expected === null ? null : false;
    r.score = verdict?.score ?? null;
    sink.write(r);
    done++;
    o.onResult?.(r, { done, total, phase });
    return r;
  };

  const trace = o.trace;
  await trace?.begin(warmup > 0 ? 'warmup' : 'idle');
  // Warmup: sequential and unmetered, before idle calibration and the schedule.
  for (let pass = 0; pass < warmup; pass++) {
    for (let i = 0; i < n; i++) {
      if (o.signal?.aborted) throw new JoulebenchError('E_RUN', 'run aborted');
      const t0 = performance.now();
      const { answer, failure } = await attempt(() => target.answer(request(prompts[i]!, suite.cases[i]!, o.signal)));
      settle(caseResult(suite.cases[i]!, i, 'warmup', pass, answer, failure, performance.now() - t0, null, false, keep ? prompts[i] : undefined), 'warmup');
    }
  }

  if (warmup > 0) await trace?.phase('idle');
  const idle = await calibrateIdle(meter, checkCount(o.idle_ms ?? DEFAULT_IDLE_MS, 'idle_ms', 0));
  const planned = planSchedule(load);
  const b = load.max_concurrency ?? 1;
  const opens = !meter.usesTargetEnergy;

  const records = new LoadColumns();
  // Aggregated in request order, so the report does not depend on which request finished first.
  const agg = new Aggregator({ concurrency: header.concurrency ?? 1 });
  const waiting = new Map<number, CaseResult[]>();
  let nextToAggregate = 0;
  const aggregateInOrder = (i: number, rs: CaseResult[]): void => {
    if (i !== nextToAggregate) {
      waiting.set(i, rs);
      return;
    }
    for (const r of rs) agg.add(r);
    for (let next = waiting.get(++nextToAggregate); next !== undefined; next = waiting.get(++nextToAggregate)) {
      waiting.delete(nextToAggregate);
      for (const r of next) agg.add(r);
    }
  };
  const firstTokens: number[] = [];
  // The steady-state window, opened and closed from inside chunk callbacks.
  const st: { start: { at_ms: number; window: Promise<MeterWindow> } | null; stop: Promise<{ reading: EnergyReading; end_ms: number }> | null } = {
    start: null,
    stop: null,
  };
  let inFlight = 0;

  await trace?.phase('scored');
  const runWindow = opens ? await meter.start() : null;
  const t0 = performance.now();
  const since = (t: number): number => t - t0;

  const onFirstToken = (at: number): void => {
    firstTokens.push(since(at));
    const k = firstTokens.length;
    if (!opens) return;
    if (k === b && st.start === null) {
      st.start = { at_ms: since(at), window: meter.start() };
      // A failed read surfaces from the trace's end(), not as an unhandled rejection here.
      trace?.phase('steady').catch(() => undefined);
    }
    if (k === plannedRequests - b && st.start !== null && st.stop === null) {
      const end_ms = since(at);
      trace?.phase('scored').catch(() => undefined);
      st.stop = st.start.window.then(async (w) => ({ reading: await w.stop(), end_ms }));
    }
  };

  // A dataset conversation's turn asks its own reply's length; by the tokenizer, its input is the messages' text.
  const tok = think !== undefined && load.dataset?.tokenizer !== undefined ? loadedTokenizer(load.dataset.tokenizer) : undefined;
  const turnCase = (c: Case, turn: number | null, messages: ChatMessage[] | undefined): Case => {
    const max_tokens = turn === null ? undefined : c.turn_max_tokens?.[turn - 1];
    if (max_tokens === undefined) return c;
    return { ...c, max_tokens, ...(tok && messages ? { prompt_tokens: messages.reduce((s, m) => s + tok.count(m.content), 0) } : {}) };
  };

  /** Prepares one request ahead of its send time; the returned function sends it and records its result. */
  const prepareTurn = (i: number, turn: number | null, prompt: string, messages: ChatMessage[] | undefined): ((planned_at: number, queue_ms: number, sent_at: number) => Promise<CaseResult>) => {
    const index = i % n;
    const c = turnCase(suite.cases[index]!, turn, messages);
    const times: number[] = [];
    let first: number | null = null;
    let firstContent: number | null = null;
    let content = 0;
    let reasoning = 0;
    let counted = false;
    const onChunk = (kind: 'content' | 'reasoning'): void => {
      const now = performance.now();
      times.push(now);
      if (kind === 'content') content++;
      else reasoning++;
      if (first === null) first = now;
      if (kind === 'content' && firstContent === null) firstContent = now;
      if (!counted && (kind === 'content' || load.ttft_token === 'any')) {
        counted = true;
        onFirstToken(now);
      }
    };
    const req: AnswerRequest = { ...request(prompt, c, o.signal), onChunk };
    if (messages) req.messages = messages;
    const call = target.prepare ? target.prepare(req) : () => target.answer(req);
    return async (planned_at, queue_ms, sent_at) => {
      const { answer, failure } = await attempt(call);
      const end = performance.now();
      const r = caseResult(c, index, 'scored', Math.floor(i / n), answer, failure, end - sent_at, null, false, keep ? (messages ?? prompt) : undefined);
      const rel = (t: number | null): number | null => (t === null ? null : r3(t - sent_at));
      const meta: LoadMeta = {
        request: i * K + (turn ?? 1) - 1,
        ...(turn !== null ? { turn } : {}),
        planned_at_ms: r3(planned_at),
        sent_at_ms: r3(since(sent_at)),
        queue_ms: r3(queue_ms),
        lag_ms: r3(Math.max(0, since(sent_at) - planned_at - queue_ms)),
        first_token_ms: rel(first),
        first_content_ms: rel(firstContent),
        e2e_ms: r3(end - sent_at),
        token_times_ms: times.map((t) => r3(t - sent_at)),
        content_chunks: content,
        reasoning_chunks: reasoning,
        ...(c.prompt_tokens !== undefined ? { tokenizer_tokens: c.prompt_tokens } : {}),
      };
      r.meta = { ...(r.meta ?? {}), load: meta };
      const settled = settle(r, 'scored');
      records.add(loadRecordOf(settled, meta, load.ttft_token), meta.request);
      return settled;
    };
  };

  /**
   * Prepares arrival `i`: one request, or a conversation whose first turn leaves on the schedule and each
   * later turn `think` ms after the previous answer ended, after the messages so far (the model's own
   * answers). A failed turn ends the conversation. The conversation holds its slot until it ends.
   */
  const prepare = (i: number): ((planned_at: number, queue_ms: number, sent_at: number) => Promise<void>) => {
    const c = suite.cases[i % n]!;
    const turns = talks(c) ? c.turns! : null;
    if (turns === null) {
      const send = prepareTurn(i, null, prompts[i % n]!, undefined);
      return async (p, q, s) => aggregateInOrder(i, [await send(p, q, s)]);
    }
    const messages: ChatMessage[] = [{ role: 'user', content: turns[0]! }];
    const first = prepareTurn(i, 1, turns[0]!, messages.slice());
    return async (planned_at, queue_ms, sent_at) => {
      conversations.count++;
      const results = [await first(planned_at, queue_ms, sent_at)];
      for (let k = 1; k < turns.length; k++) {
        const last = results[results.length - 1]!;
        if (last.error !== null || last.response === null || stopped || o.signal?.aborted) break;
        const due = performance.now() + think!;
        messages.push({ role: 'assistant', content: last.response }, { role: 'user', content: turns[k]! });
        const send = prepareTurn(i, k + 1, turns[k]!, messages.slice());
        await waitUntil(due);
        if (stopped || o.signal?.aborted) break;
        results.push(await send(since(due), 0, performance.now()));
      }
      conversations.turns += results.length;
      aggregateInOrder(i, results);
    };
  };

  // The run waits for every request it sent before it ends or throws (the first failure wins).
  let outstanding = 0;
  let failed: { error: unknown } | null = null;
  let stopped = false;
  let allSettled: (() => void) | null = null;
  const settledAll = (): Promise<void> => (outstanding === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allSettled = resolve)));
  // Requests due while every slot was busy, first come first served (as vLLM's semaphore): two numbers a
  // request, never its prepared body, since a saturated server may leave most of a long run waiting here.
  const queuedIndex: number[] = [];
  const queuedReady: number[] = [];
  let queuedHead = 0;
  const dispatch = (i: number, send: ReturnType<typeof prepare>, ready: number, sent: number): void => {
    inFlight++;
    outstanding++;
    send(planned[i]!, sent - ready, sent)
      .catch((error: unknown) => {
        failed ??= { error };
      })
      .finally(() => {
        inFlight--;
        if (queuedHead < queuedIndex.length && failed === null && !stopped && !o.signal?.aborted) {
          const j = queuedIndex[queuedHead]!;
          const readyJ = queuedReady[queuedHead]!;
          queuedHead++;
          if (queuedHead === queuedIndex.length) queuedIndex.length = queuedReady.length = queuedHead = 0;
          const sendJ = prepare(j);
          dispatch(j, sendJ, readyJ, performance.now());
        }
        if (--outstanding === 0) allSettled?.();
      });
  };
  try {
    let next = prepare(0);
    for (let i = 0; i < load.num_requests; i++) {
      if (failed !== null) break;
      if (o.signal?.aborted) throw new JoulebenchError('E_RUN', 'run aborted');
      const send = next;
      await waitUntil(t0 + planned[i]!);
      // The moment this request could leave: lag is measured to here, a wait for a slot from here.
      const ready = performance.now();
      if (load.max_concurrency !== null && inFlight >= load.max_concurrency) {
        queuedIndex.push(i);
        queuedReady.push(ready);
      } else {
        dispatch(i, send, ready, ready);
      }
      if (i + 1 < load.num_requests) {
        // Node writes this request's bytes on the next tick: when the next request is not due yet, let
        // them go out first, then prepare the next one while it waits.
        if (t0 + planned[i + 1]! - performance.now() > 1) await new Promise((r) => setImmediate(r));
        next = prepare(i + 1);
      }
    }
    await settledAll();
    if (failed === null && queuedHead < queuedIndex.length) throw new JoulebenchError('E_RUN', 'run aborted');
    if (failed !== null) throw (failed as { error: unknown }).error;
  } catch (e) {
    stopped = true;
    await settledAll();
    await runWindow?.stop().catch(() => undefined);
    await trace?.end().catch(() => undefined);
    // The first failure says what went wrong (an abort that came after it does not).
    throw failed !== null ? (failed as { error: unknown }).error : e;
  }
  // Times to the µs, as the load_energy line writes them: the block rebuilt from the file is then this one.
  const run_end_ms = r3(since(performance.now()));
  const runReading = runWindow ? await runWindow.stop() : null;
  await trace?.end();
  const steady = st.stop ? await st.stop : null;
  if (!st.stop && st.start) {
    await (await st.start.window).stop(); // opened, never closed: discarded, and so are its trace rows' `steady`
    trace?.relabel('steady', 'scored');
  }
  const steadyAt = st.start?.at_ms ?? null;

  sink.note?.({
    record: 'load_energy',
    run: runReading ? windowOf(runReading) : null,
    run_end_ms,
    steady: steady && steadyAt !== null ? { ...windowOf(steady.reading), start_ms: r3(steadyAt), end_ms: r3(steady.end_ms) } : null,
    idle: { status: idle.status, watts: idle.watts },
    ...(o.pue !== undefined ? { pue: o.pue } : {}),
  });
  const power_trace = trace?.summary();
  if (power_trace) sink.note?.(powerTraceLine(power_trace));
  sink.note?.({ record: 'end', scored: done - warmup * n });
  sink.flush?.();

  const base = agg.report({
    suite: { name: suite.name, version: suite.version, digest: header.suite_digest },
    target: target.id,
    meter: meter.id,
    warmup,
    repeats: passes,
    concurrency: header.concurrency ?? 1,
    energy: { idle, suite: runReading ? toSuiteWindow(runReading) : null },
    per_case_energy: opens ? 'none' : 'target',
    ...(o.prices ? { prices: o.prices } : {}),
    ...(o.pue !== undefined ? { pue: o.pue } : {}),
  });
  const block = buildLoadBlock(load, records, {
    first_token_at_ms: firstTokens,
    steady: steady ? windowOf(steady.reading) : null,
    measured_window: steady && steadyAt !== null ? { start_ms: r3(steadyAt), end_ms: r3(steady.end_ms) } : null,
    run: runReading ? windowOf(runReading) : null,
    run_end_ms,
    idle,
    floor_ms: meter.floor_ms,
    ...(think !== undefined ? { conversations } : {}),
  });
  return { report: { ...base, ...(power_trace ? { power_trace } : {}), load: block }, header, idle, run: runReading };
}

/** The target's answer, or what it threw (`failure` is NO_FAILURE when it answered). */
async function attempt(call: () => Answer | Promise<Answer>): Promise<{ answer: Answer | null; failure: unknown }> {
  try {
    return { answer: await call(), failure: NO_FAILURE };
  } catch (e) {
    return { answer: null, failure: e };
  }
}

function request(prompt: string, c: AnswerRequest['case'], signal: AbortSignal | undefined): AnswerRequest {
  return signal ? { prompt, case: c, signal } : { prompt, case: c };
}

function windowOf(r: EnergyReading): WindowReading {
  const w: WindowReading = { joules: r.joules, source: r.source, window_ms: r.window_ms, below_floor: r.below_floor };
  if (r.validity) w.validity = r.validity;
  if (Object.keys(r.by_domain).length > 0) w.by_domain = r.by_domain;
  return w;
}

/** Waits until a `performance.now()` moment: a timer while far, event-loop turns for the last 2 ms (timers fire ~1 ms late). */
export async function waitUntil(at: number): Promise<void> {
  for (;;) {
    const left = at - performance.now();
    if (left <= 0) return;
    if (left > 2) await new Promise((r) => setTimeout(r, left - 1.5));
    else await new Promise((r) => setImmediate(r));
  }
}

function r3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
