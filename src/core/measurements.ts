import { round } from './stats.js';
import type { CaseResult } from './types.js';

/**
 * Seed 003's measurement classes: `deterministic` depends only on the answers (same answers, same
 * value); `environmental` depends on this harness, endpoint, network and run.
 */
export type MeasurementClass = 'deterministic' | 'environmental';

/** One named measurement. `official` is provenance (emitted by the suite's recognized evaluator), not an audit claim. */
export interface Measurement {
  value: number;
  unit: string;
  class: MeasurementClass;
  official: boolean;
}

export interface MeasurementBlock {
  /** Keyed by name (`mmlu.accuracy`, …), in a fixed order. */
  measurements: Record<string, Measurement>;
  /** Why a measurement was omitted (never written as 0). */
  warnings: string[];
}

export interface MmluMeasurementOptions {
  /** `params.retry` was set: adds `mmlu.retry_count` and `mmlu.retry_overhead_ms`. */
  retry_enabled: boolean;
  /** Both token prices were given. */
  prices_set: boolean;
}

/**
 * The `mmlu.*` measurements of seed 003 from a run's scored results. Pure. Accuracy counts an errored
 * case as not correct (correct / total). Tokens and cost are omitted, with a warning, when any answered
 * case lacks usage (or, for cost, when a price is missing); latency is the successful attempt's alone.
 */
export function mmluMeasurements(all: readonly CaseResult[], opts: MmluMeasurementOptions): MeasurementBlock {
  const results = all.filter((r) => r.phase === 'scored');
  const answered = results.filter((r) => r.error === null);
  const m: Record<string, Measurement> = {};
  const warnings: string[] = [];
  const env = (value: number, unit: string, official = true): Measurement => ({ value, unit, class: 'environmental', official });

  if (results.length > 0) {
    const correct = results.filter((r) => r.passed === true).length;
    m['mmlu.accuracy'] = { value: round(correct / results.length, 6), unit: 'fraction', class: 'deterministic', official: true };
  }
  if (answered.length > 0) {
    m['mmlu.avg_latency_ms'] = env(round(answered.reduce((s, r) => s + r.latency_ms, 0) / answered.length, 3), 'ms');
  }
  const noUsage = answered.filter((r) => r.prompt_tokens === null || r.completion_tokens === null).length;
  if (answered.length > 0 && noUsage === 0) {
    m['mmlu.total_tokens'] = env(answered.reduce((s, r) => s + (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0), 0), 'tokens');
  } else if (answered.length > 0) {
    warnings.push(`mmlu.total_tokens omitted: ${noUsage} of ${answered.length} answered cases reported no token usage`);
  }
  if (answered.length > 0) {
    const noCost = answered.filter((r) => r.cost_usd === null).length;
    if (!opts.prices_set) warnings.push('mmlu.cost_usd omitted: no prices given (prices.input_usd_per_mtok, prices.output_usd_per_mtok)');
    else if (noCost > 0) warnings.push(`mmlu.cost_usd omitted: ${noCost} of ${answered.length} answered cases have no cost (token usage missing)`);
    else m['mmlu.cost_usd'] = env(round(answered.reduce((s, r) => s + (r.cost_usd ?? 0), 0), 9), 'usd');
  }
  if (opts.retry_enabled) {
    m['mmlu.retry_count'] = env(results.reduce((s, r) => s + Math.max(0, r.attempts - 1), 0), 'attempts', false);
    m['mmlu.retry_overhead_ms'] = env(round(results.reduce((s, r) => s + r.retry_overhead_ms, 0), 3), 'ms', false);
  }
  return { measurements: m, warnings };
}
