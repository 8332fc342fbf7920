import type { IdleCalibration } from '../core/energy.js';
import { LoadColumns } from './columns.js';
import { datasetLengths, type DatasetLengths } from './dataset.js';
import { meetsSlo, schedulingLag, servingMetrics, type LoadRecord, type SchedulingLag, type ServingMetrics } from './metrics.js';
import { rateLabel, type LoadOptions, type TtftToken } from './options.js';
import { round } from '../stats/serving-summary.js';
import { steadyStateEnergy, steadyWindow, tokensBetween, type SteadyStateEnergy, type WindowReading } from './steady.js';

/** The `load` block of a load run's report. */
export interface LoadBlock {
  request_rate: number | 'inf';
  burstiness: number;
  seed: number;
  max_concurrency: number | null;
  num_requests: number;
  ttft_token: TtftToken;
  /** A synthetic workload's asked and realised lengths; absent for a suite's cases. */
  dataset?: DatasetLengths;
  /** With `--think-time-ms`: conversations started, their mean turns sent, and the think time. */
  conversations?: { count: number; turns_per_conversation_mean: number | null; think_time_ms: number };
  /** vLLM `bench serve` result fields (same names and definitions), plus correct goodput. */
  serving: ServingMetrics;
  scheduling: SchedulingLag;
  /** Steady-state energy (ML.ENERGY's window rule), or the whole run when that window is unusable. */
  energy: SteadyStateEnergy;
  /** Whole-run gross joules ÷ requests that met every SLO; `null` without `--slo` or a meter. */
  joules_per_good_request: number | null;
  /** Goodput per watt of whole-run average power = good requests per joule. */
  goodput_per_watt: number | null;
  /** Output tokens of requests that met every SLO, produced inside the energy block's window, ÷ its gross joules. */
  good_output_tokens_per_joule: number | null;
  notes: string[];
}

/** What the driver measured besides the per-request records. */
interface LoadMeasurements {
  /** First-token moments used for the steady-state rule, ms since the run started. */
  first_token_at_ms: ArrayLike<number>;
  steady: WindowReading | null;
  /** The window the driver actually measured (the rule applied online), if one opened and closed. */
  measured_window: { start_ms: number; end_ms: number } | null;
  run: WindowReading | null;
  run_end_ms: number;
  idle: Pick<IdleCalibration, 'status' | 'watts'>;
  floor_ms: number;
  /** Conversations started and turns sent (`--think-time-ms`). */
  conversations?: { count: number; turns: number };
}

/** Builds the `load` block from the records and readings. Pure. */
export function buildLoadBlock(o: LoadOptions, input: LoadColumns | readonly LoadRecord[], m: LoadMeasurements): LoadBlock {
  const records = LoadColumns.from(input);
  const serving = servingMetrics(records, o.percentiles, o.slo);
  const scheduling = schedulingLag(records);
  const b = o.max_concurrency ?? 1;
  // A conversation run's requests are its turns: the rule counts those sent.
  const rule = steadyWindow(m.first_token_at_ms, b, o.think_time_ms !== undefined ? records.length : o.num_requests);
  const energy = steadyStateEnergy({
    window: 'reason' in rule ? null : (m.measured_window ?? null),
    window_reason: 'reason' in rule ? rule.reason : m.measured_window ? null : 'the steady-state window was not measured',
    steady: m.steady,
    run: m.run,
    run_start_ms: 0,
    run_end_ms: m.run_end_ms,
    idle: m.idle,
    floor_ms: m.floor_ms,
    records,
  });
  const notes: string[] = [];
  if (o.max_concurrency === null) notes.push('no --max-concurrency: the steady-state rule uses B = 1');
  if (scheduling.client_bottleneck) {
    notes.push(`p99 scheduling lag ${scheduling.p99_lag_ms} ms > 10 ms: the client, not the server, limited the request rate`);
  }
  if (scheduling.queued_requests > 0) {
    notes.push(
      `${scheduling.queued_requests} request${scheduling.queued_requests === 1 ? '' : 's'} waited for a slot (p99 ${scheduling.p99_queue_ms} ms): the server (or the cap) limited the rate`,
    );
  }
  if (serving.output_tokens_from === 'chunks' || serving.output_tokens_from === 'mixed') {
    notes.push('output tokens counted as streamed chunks where the server gave no usage (one chunk may hold several tokens)');
  }
  // Energy per request or token only from a valid window (the readings stay in `energy`).
  const run = m.run?.validity?.valid === false ? null : m.run;
  const runWatts = run && run.joules !== null && m.run_end_ms > 0 ? run.joules / (m.run_end_ms / 1000) : null;
  const good = serving.good_requests;
  const slo = o.slo;
  const goodTokens =
    slo && energy.joules !== null && energy.joules > 0 && energy.validity?.valid !== false
      ? tokensBetween(records, energy.steady_state ? energy.window_start_ms! : -Infinity, energy.steady_state ? energy.window_end_ms! : Infinity, (r) => meetsSlo(r, slo))
      : null;
  return {
    request_rate: rateLabel(o.request_rate),
    burstiness: o.burstiness,
    seed: o.seed,
    max_concurrency: o.max_concurrency,
    num_requests: o.num_requests,
    ttft_token: o.ttft_token,
    ...(o.dataset ? { dataset: datasetLengths(o.dataset, records) } : {}),
    ...(o.think_time_ms !== undefined ? { conversations: conversationsOf(m.conversations, o.think_time_ms) } : {}),
    serving,
    scheduling,
    energy,
    joules_per_good_request: run && run.joules !== null && good !== null && good > 0 ? round(run.joules / good, 9) : null,
    goodput_per_watt: runWatts !== null && runWatts > 0 && serving.request_goodput !== null ? round(serving.request_goodput / runWatts, 9) : null,
    good_output_tokens_per_joule: goodTokens === null ? null : round(goodTokens / energy.joules!, 6),
    notes,
  };
}

function conversationsOf(c: { count: number; turns: number } | undefined, think_time_ms: number): NonNullable<LoadBlock['conversations']> {
  const count = c?.count ?? 0;
  return { count, turns_per_conversation_mean: count > 0 ? round(c!.turns / count, 6) : null, think_time_ms };
}
