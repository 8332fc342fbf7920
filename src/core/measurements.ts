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

interface MmluMeasurementOptions {
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
  const tally = new MmluTally();
  for (const r of all) tally.add(r);
  return tally.block(opts);
}

/**
 * {@link mmluMeasurements} added up a result at a time (a run hands each scored result over in case
 * order and keeps none): the same sums, in the same order, so the same figures to the last bit.
 */
export class MmluTally {
  private results = 0;
  private correct = 0;
  private answered = 0;
  private latency_ms = 0;
  private noUsage = 0;
  private tokens = 0;
  private noCost = 0;
  private cost_usd = 0;
  private retries = 0;
  private retry_overhead_ms = 0;

  /** Adds one result; warmup results are not counted. */
  add(r: CaseResult): void {
    if (r.phase !== 'scored') return;
    this.results++;
    if (r.passed === true) this.correct++;
    this.retries += Math.max(0, r.attempts - 1);
    this.retry_overhead_ms += r.retry_overhead_ms;
    if (r.error !== null) return;
    this.answered++;
    this.latency_ms += r.latency_ms;
    if (r.prompt_tokens === null || r.completion_tokens === null) this.noUsage++;
    this.tokens = this.tokens + (r.prompt_tokens ?? 0) + (r.completion_tokens ?? 0);
    if (r.cost_usd === null) this.noCost++;
    this.cost_usd += r.cost_usd ?? 0;
  }

  block(opts: MmluMeasurementOptions): MeasurementBlock {
    const m: Record<string, Measurement> = {};
    const warnings: string[] = [];
    const env = (value: number, unit: string, official = true): Measurement => ({ value, unit, class: 'environmental', official });
    const { results, answered } = this;
    if (results > 0) m['mmlu.accuracy'] = { value: round(this.correct / results, 6), unit: 'fraction', class: 'deterministic', official: true };
    if (answered > 0) {
      m['mmlu.avg_latency_ms'] = env(round(this.latency_ms / answered, 3), 'ms');
      if (this.noUsage === 0) m['mmlu.total_tokens'] = env(this.tokens, 'tokens');
      else warnings.push(`mmlu.total_tokens omitted: ${this.noUsage} of ${answered} answered cases reported no token usage`);
      if (!opts.prices_set) warnings.push('mmlu.cost_usd omitted: no prices given (prices.input_usd_per_mtok, prices.output_usd_per_mtok)');
      else if (this.noCost > 0) warnings.push(`mmlu.cost_usd omitted: ${this.noCost} of ${answered} answered cases have no cost (token usage missing)`);
      else m['mmlu.cost_usd'] = env(round(this.cost_usd, 9), 'usd');
    }
    if (opts.retry_enabled) {
      m['mmlu.retry_count'] = env(this.retries, 'attempts', false);
      m['mmlu.retry_overhead_ms'] = env(round(this.retry_overhead_ms, 3), 'ms', false);
    }
    return { measurements: m, warnings };
  }
}
