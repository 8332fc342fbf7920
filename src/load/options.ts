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
}

export const DEFAULT_PERCENTILES = [90, 95, 99];

/** JSON has no Infinity: a rate is written as a number or `"inf"`. */
export function rateLabel(rate: number): number | 'inf' {
  return rate === Infinity ? 'inf' : rate;
}
