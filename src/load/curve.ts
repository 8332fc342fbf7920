import type { EnergySource } from '../core/types.js';
import type { LoadBlock } from './block.js';

/** One point of a rate sweep's curve. */
export interface RatePoint {
  request_rate: number | 'inf';
  accuracy_pct: number | null;
  request_throughput: number | null;
  output_throughput: number | null;
  p99_ttft_ms: number | null;
  p99_tpot_ms: number | null;
  request_goodput: number | null;
  correct_goodput: number | null;
  joules_per_output_token: number | null;
  /** Where `joules_per_output_token` comes from (the load run's energy block). */
  energy_source: EnergySource;
  steady_state: boolean;
  client_bottleneck: boolean;
}

/** The throughput/latency/energy curve of a rate sweep, one point per rate, in the order run. Pure. */
export function rateCurve(runs: readonly { accuracy_pct: number | null; load: LoadBlock }[]): RatePoint[] {
  return runs.map(({ accuracy_pct, load }) => ({
    request_rate: load.request_rate,
    accuracy_pct,
    request_throughput: load.serving.request_throughput,
    output_throughput: load.serving.output_throughput,
    p99_ttft_ms: num(load.serving['p99_ttft_ms']),
    p99_tpot_ms: num(load.serving['p99_tpot_ms']),
    request_goodput: load.serving.request_goodput,
    correct_goodput: load.serving.correct_goodput,
    joules_per_output_token: load.energy.joules_per_output_token,
    energy_source: load.energy.source,
    steady_state: load.energy.steady_state,
    client_bottleneck: load.scheduling.client_bottleneck,
  }));
}

function num(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

/** Orders request rates as a sweep runs them: ascending, `inf` (all at once) last. */
export function compareRates(a: number | 'inf', b: number | 'inf'): number {
  if (a === b) return 0;
  if (a === 'inf') return 1;
  if (b === 'inf') return -1;
  return a - b;
}

/** Energy sources that are a cost model or a coefficient, never a measurement. */
const MODELLED_SOURCES: ReadonlySet<string> = new Set(['model', 'model:api', 'estimate']);
/** Energy sources that are readings of a meter. */
const MEASURED_SOURCES: ReadonlySet<string> = new Set(['rapl', 'nvml', 'amdsmi', 'integrated-power', 'powermetrics']);

/** Which axis a J/output-token figure goes on: measured and modelled never share one; `composite`/`mixed` on neither. Pure. */
export function energyKind(source: string): 'measured' | 'modelled' | null {
  const s = source.replace(/ net$/, '');
  return MEASURED_SOURCES.has(s) ? 'measured' : MODELLED_SOURCES.has(s) ? 'modelled' : null;
}
