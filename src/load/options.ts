import type { LoadDataset } from './dataset.js';
import type { Slo } from './metrics.js';

/** Which first token TTFT waits for: the first visible content, or any output token (reasoning included). */
export type TtftToken = 'content' | 'any';

/** An open-loop load run's settings (plain data: it enters the config digest and the results header). */
export interface LoadOptions {
  /** Mean requests per second; `Infinity` (`inf`) sends every request at once. */
  request_rate: number;
  /** Gamma shape of the inter-arrival gaps; 1 = Poisson (vLLM's `--burstiness`). */
  burstiness: number;
  seed: number;
  /** Requests in flight at most; `null`: unbounded. */
  max_concurrency: number | null;
  /** Requests to send; the suite's cases are cycled when it exceeds them. */
  num_requests: number;
  /** Percentiles reported for each latency family (vLLM's `--metric-percentiles`). */
  percentiles: number[];
  slo: Slo | null;
  ttft_token: TtftToken;
  /** A synthetic workload (`--dataset random`) instead of the suite's cases. */
  dataset?: LoadDataset;
  /** Multi-turn cases are conversations: each later turn leaves this long after the previous answer ends. */
  think_time_ms?: number;
}

export const DEFAULT_PERCENTILES = [90, 95, 99];

/** JSON has no Infinity: a rate is written as a number or `"inf"`. */
export function rateLabel(rate: number): number | 'inf' {
  return rate === Infinity ? 'inf' : rate;
}

/**
 * A results header's `load` settings, or `bad(key, want)` for the first that is not as a load run writes it
 * (burstiness, seed, max_concurrency, slo and ttft_token are checked when present).
 */
export function checkLoadHeader(load: unknown, bad: (key: string, want: string) => never): void {
  if (typeof load !== 'object' || load === null || Array.isArray(load)) bad('load', 'an object');
  const l = load as Record<string, unknown>;
  const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0;
  const whole = (v: unknown, min: number) => Number.isSafeInteger(v) && (v as number) >= min;
  if (!(l.request_rate === 'inf' || positive(l.request_rate))) bad('load.request_rate', 'a number > 0 or "inf"');
  if (!whole(l.num_requests, 1)) bad('load.num_requests', 'a whole number >= 1');
  if (!Array.isArray(l.percentiles) || !l.percentiles.every((p) => positive(p) && (p as number) <= 100)) bad('load.percentiles', 'a list of numbers in (0, 100]');
  if (l.burstiness !== undefined && !positive(l.burstiness)) bad('load.burstiness', 'a number > 0');
  if (l.seed !== undefined && !whole(l.seed, 0)) bad('load.seed', 'a whole number >= 0');
  if (l.max_concurrency !== undefined && l.max_concurrency !== null && !whole(l.max_concurrency, 1)) bad('load.max_concurrency', 'null or a whole number >= 1');
  if (l.ttft_token !== undefined && l.ttft_token !== 'content' && l.ttft_token !== 'any') bad('load.ttft_token', '"content" or "any"');
  if (l.think_time_ms !== undefined && !(typeof l.think_time_ms === 'number' && Number.isFinite(l.think_time_ms) && l.think_time_ms >= 0)) bad('load.think_time_ms', 'a number of ms >= 0');
  if (l.dataset !== undefined) {
    const d = l.dataset as Record<string, unknown>;
    if (typeof d !== 'object' || d === null || (d.kind !== 'random' && d.kind !== 'sharegpt')) bad('load.dataset', 'an object with kind "random" or "sharegpt"');
    if (d.tokenizer !== undefined && typeof d.tokenizer !== 'string') bad('load.dataset.tokenizer', 'a file path');
    if (d.kind === 'sharegpt') {
      if (typeof d.path !== 'string') bad('load.dataset.path', 'a file path');
    } else {
      for (const k of ['input_len', 'output_len', 'prefix_len'] as const) if (!whole(d[k], k === 'prefix_len' ? 0 : 1)) bad(`load.dataset.${k}`, 'a whole number');
      if (typeof d.range_ratio !== 'number' || !(d.range_ratio >= 0 && d.range_ratio < 1)) bad('load.dataset.range_ratio', 'a number in [0, 1)');
    }
  }
  if (l.slo !== undefined && l.slo !== null) {
    if (typeof l.slo !== 'object' || Array.isArray(l.slo)) bad('load.slo', 'null or an object');
    for (const [k, v] of Object.entries(l.slo as Record<string, unknown>)) {
      if (k !== 'ttft_ms' && k !== 'tpot_ms' && k !== 'e2el_ms') bad(`load.slo.${k}`, 'absent (the SLOs are ttft_ms, tpot_ms and e2el_ms)');
      if (!positive(v)) bad(`load.slo.${k}`, 'a number of ms > 0');
    }
  }
}
