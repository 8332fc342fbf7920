import { readFileSync } from 'node:fs';

/**
 * A report file without the figures that are timings, which differ between any two runs: the latency
 * and TTFT percentiles, the scored passes' wall time (`suite_window_ms`) and `throughput`, their intervals and reasons, the between-pass latency spread, and `extra` top-level
 * keys. What is left must be equal, byte for byte.
 */
export function timelessReport(path: string, extra: readonly string[] = []): Record<string, unknown> {
  const r = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  for (const k of ['latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms', 'ttft_p50_ms', 'ttft_p95_ms', 'suite_window_ms', 'throughput', ...extra]) delete r[k];
  const ci = r.ci as Record<string, Record<string, unknown>>;
  for (const k of ['latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms']) {
    delete ci[k];
    delete ci.reasons![k];
  }
  // A scheduling blip of a few ms in one pass moves the spread of latency between passes.
  const spread = r.repeat_spread as Record<string, unknown> | null;
  if (spread) for (const k of ['latency_p50_ms', 'latency_p95_ms']) delete spread[k];
  return r;
}
