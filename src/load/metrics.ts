import { LoadColumns } from './columns.js';
import { percentileName, round, summarize } from '../stats/serving-summary.js';

/** What one request of a load run recorded (ms; `*_at_ms` since the run's start, the others since it was sent). */
export interface LoadRecord {
  ok: boolean;
  /** The scorer's verdict; `null` for unscored cases and failures. */
  passed: boolean | null;
  planned_at_ms: number;
  sent_at_ms: number;
  /** Wait for a `--max-concurrency` slot. */
  queue_ms: number;
  /** Planned send time → the moment it could have left: the client's own lateness. */
  lag_ms: number;
  /** Sent → first counted token (see `ttft_token`); `null` when nothing was streamed. */
  ttft_ms: number | null;
  e2e_ms: number;
  /** Sent → every token-bearing chunk (content and reasoning), in order. */
  token_times_ms: ArrayLike<number> & Iterable<number>;
  output_tokens: number | null;
  output_tokens_from: 'usage' | 'chunks' | 'none';
  prompt_tokens: number | null;
  /** The prompt's tokens by the load dataset's tokenizer, when it has one. */
  tokenizer_tokens?: number;
}

/** Service-level objectives: a request is "good" when it meets every one given (ms). */
export interface Slo {
  ttft_ms?: number;
  tpot_ms?: number;
  e2el_ms?: number;
}

/** The four latency families vLLM reports, each as mean/median/std/percentiles. */
export const LATENCY_FAMILIES = ['ttft', 'tpot', 'itl', 'e2el'] as const;
type LatencyFamily = (typeof LATENCY_FAMILIES)[number];

/** vLLM `bench serve`'s result fields (same names), plus joulebench's correctness-aware additions. */
export interface ServingMetrics {
  completed: number;
  failed: number;
  /** Start of the run to the last reply, s. */
  duration: number;
  total_input_tokens: number | null;
  total_output_tokens: number | null;
  /** `usage` when every completed request had it, else `chunks` (one token per content chunk), else `mixed`. */
  output_tokens_from: 'usage' | 'chunks' | 'mixed' | 'none';
  request_throughput: number | null;
  output_throughput: number | null;
  total_token_throughput: number | null;
  /** Requests/s that met every SLO (vLLM's goodput); `null` without `--slo`. */
  request_goodput: number | null;
  /** Requests/s that met every SLO **and** were scored correct. */
  correct_goodput: number | null;
  /** Output tokens/s of the requests that met every SLO; `null` without `--slo` or when a good request's count is unknown. */
  output_goodput: number | null;
  good_requests: number | null;
  good_correct_requests: number | null;
  slo: Slo | null;
  /** `mean_ttft_ms`, `median_ttft_ms`, `std_ttft_ms`, `p99_ttft_ms`, … for ttft, tpot, itl, e2el. */
  [field: string]: unknown;
}

/** Mean, p50, p90, p99 and max of one scheduling delay `K` (ms). */
type DelayFigures<K extends string> = Record<`${'mean' | 'p50' | 'p90' | 'p99' | 'max'}_${K}_ms`, number | null>;

/** When requests left against their schedule: the client's lag and the `--max-concurrency` queue, never mixed (ms). */
export type SchedulingLag = DelayFigures<'lag'> & DelayFigures<'queue'> & {
  queued_requests: number;
  /** True when p99 lag exceeded {@link CLIENT_BOTTLENECK_LAG_MS}: the client, not the server, limited the rate. */
  client_bottleneck: boolean;
};

/** A p99 scheduling lag above this means the client could not keep the schedule. */
const CLIENT_BOTTLENECK_LAG_MS = 10;

/** TPOT of one request: (e2e − TTFT) ÷ (output tokens − 1); none for one output token or without TTFT. */
export function tpotOf(r: LoadRecord): number | null {
  if (r.ttft_ms === null || r.output_tokens === null || r.output_tokens <= 1) return null;
  return (r.e2e_ms - r.ttft_ms) / (r.output_tokens - 1);
}

/** Gaps between consecutive token chunks from the first counted token on, ms, appended to `out`. */
export function itlOf(r: LoadRecord, out: number[] = []): number[] {
  if (r.ttft_ms === null) return out;
  let prev: number | null = null;
  for (const t of r.token_times_ms) {
    if (t < r.ttft_ms) continue;
    if (prev !== null) out.push(t - prev);
    prev = t;
  }
  return out;
}

/** Whether a completed request met every SLO given. A TPOT that does not exist (one token) counts as met, as in vLLM. */
export function meetsSlo(r: LoadRecord, slo: Slo): boolean {
  if (!r.ok) return false;
  if (slo.ttft_ms !== undefined && (r.ttft_ms === null || r.ttft_ms > slo.ttft_ms)) return false;
  if (slo.tpot_ms !== undefined) {
    const tpot = tpotOf(r);
    if (r.ttft_ms === null && r.output_tokens !== 1) return false; // unknown cannot meet it
    if (tpot !== null && tpot > slo.tpot_ms) return false;
  }
  if (slo.e2el_ms !== undefined && r.e2e_ms > slo.e2el_ms) return false;
  return true;
}

/** The serving metrics of a load run, named as vLLM names them; `percentiles` as its `--metric-percentiles`. Pure. */
export function servingMetrics(input: LoadColumns | readonly LoadRecord[], percentiles: readonly number[], slo: Slo | null): ServingMetrics {
  let requests = 0;
  let completed = 0;
  let end_ms = 0;
  // Summed in request order, null once a completed request lacks the figure (and with none completed).
  let inTokens: number | null = 0;
  let outTokens: number | null = 0;
  const sources = new Set<LoadRecord['output_tokens_from']>();
  const families: Record<LatencyFamily, number[]> = { ttft: [], tpot: [], itl: [], e2el: [] };
  let good: number | null = slo ? 0 : null;
  let goodCorrect: number | null = slo ? 0 : null;
  let goodTokens: number | null = slo ? 0 : null;
  for (const r of LoadColumns.from(input).records()) {
    requests++;
    end_ms = Math.max(end_ms, r.sent_at_ms + r.e2e_ms);
    if (slo && meetsSlo(r, slo)) {
      good!++;
      if (r.passed === true) goodCorrect!++;
      goodTokens = goodTokens === null || r.output_tokens === null ? null : goodTokens + r.output_tokens;
    }
    if (!r.ok) continue;
    completed++;
    inTokens = inTokens === null || r.prompt_tokens === null ? null : inTokens + r.prompt_tokens;
    outTokens = outTokens === null || r.output_tokens === null ? null : outTokens + r.output_tokens;
    sources.add(r.output_tokens_from);
    if (r.ttft_ms !== null) families.ttft.push(r.ttft_ms);
    const tpot = tpotOf(r);
    if (tpot !== null) families.tpot.push(tpot);
    itlOf(r, families.itl);
    families.e2el.push(r.e2e_ms);
  }
  if (completed === 0) inTokens = outTokens = null;
  const duration_s = end_ms / 1000;
  const perS = (n: number | null): number | null => (n === null || duration_s <= 0 ? null : round(n / duration_s, 4));
  const from: ServingMetrics['output_tokens_from'] = sources.size === 0 ? 'none' : sources.size === 1 ? [...sources][0]! : 'mixed';
  const m: ServingMetrics = {
    completed,
    failed: requests - completed,
    duration: round(duration_s, 4) ?? 0,
    total_input_tokens: inTokens,
    total_output_tokens: outTokens,
    output_tokens_from: from,
    request_throughput: perS(completed),
    output_throughput: perS(outTokens),
    total_token_throughput: inTokens === null || outTokens === null ? null : perS(inTokens + outTokens),
    request_goodput: perS(good),
    correct_goodput: perS(goodCorrect),
    output_goodput: perS(goodTokens),
    good_requests: good,
    good_correct_requests: goodCorrect,
    slo,
  };
  for (const f of LATENCY_FAMILIES) {
    const s = summarize(families[f], percentiles);
    m[`mean_${f}_ms`] = s.mean;
    m[`median_${f}_ms`] = s.median;
    m[`std_${f}_ms`] = s.std;
    for (const [p, v] of Object.entries(s.percentiles)) m[`p${p}_${f}_ms`] = v;
  }
  return m;
}

/** Scheduling lag of the client and queueing for slots, from every request sent. */
export function schedulingLag(input: LoadColumns | readonly LoadRecord[]): SchedulingLag {
  const lags: number[] = [];
  const queues: number[] = [];
  for (const r of LoadColumns.from(input).records()) {
    lags.push(r.lag_ms);
    queues.push(r.queue_ms);
  }
  const figures = <K extends string>(k: K, values: number[]): DelayFigures<K> => {
    const s = summarize(values, [50, 90, 99, 100]);
    const p = (q: number): number | null => s.percentiles[percentileName(q)] ?? null;
    return { [`mean_${k}_ms`]: s.mean, [`p50_${k}_ms`]: p(50), [`p90_${k}_ms`]: p(90), [`p99_${k}_ms`]: p(99), [`max_${k}_ms`]: p(100) } as DelayFigures<K>;
  };
  const lag = figures('lag', lags);
  return {
    ...lag,
    ...figures('queue', queues),
    queued_requests: queues.filter((q) => q > 0).length,
    client_bottleneck: lag.p99_lag_ms !== null && lag.p99_lag_ms > CLIENT_BOTTLENECK_LAG_MS,
  };
}
