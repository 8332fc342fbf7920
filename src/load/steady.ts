import type { IdleCalibration, WindowValidity } from '../core/energy.js';
import type { EnergySource } from '../core/types.js';
import { LoadColumns } from './columns.js';
import { type LoadRecord } from './metrics.js';
import { round } from '../stats/serving-summary.js';

/** A steady-state window shorter than this falls back to the whole run (ms). */
const MIN_STEADY_WINDOW_MS = 5000;

/**
 * ML.ENERGY's steady-state rule: with at most B in flight, measure from the B-th first token to the (N−B)-th,
 * leaving out ramp-up and ramp-down. `first_token_at_ms` in any order. Pure.
 */
export function steadyWindow(
  first_token_at_ms: ArrayLike<number>,
  b: number,
  n: number,
): { start_ms: number; end_ms: number; b: number; n: number } | { reason: string } {
  if (!Number.isInteger(b) || b < 1) return { reason: `B = ${b} is not a positive whole number` };
  if (n - b <= b) return { reason: `${n} requests with B = ${b} in flight leave no steady part (needs N > 2B)` };
  if (first_token_at_ms.length < n - b) {
    return { reason: `only ${first_token_at_ms.length} of ${n} requests streamed a first token (the rule needs the (N−B)-th = ${n - b}-th)` };
  }
  const sorted = Float64Array.from(first_token_at_ms).sort();
  const start_ms = sorted[b - 1]!;
  const end_ms = sorted[n - b - 1]!;
  if (!(end_ms > start_ms)) return { reason: 'the B-th and the (N−B)-th first tokens came at the same moment' };
  return { start_ms, end_ms, b, n };
}

/** One meter reading as the load driver keeps it. */
export interface WindowReading {
  joules: number | null;
  source: EnergySource;
  window_ms: number;
  below_floor: boolean;
  validity?: WindowValidity;
  /** Per domain (the report's energy layers). */
  by_domain?: Record<string, { joules: number | null; source: EnergySource }>;
}

/** The energy block of a load run's report. */
export interface SteadyStateEnergy {
  /** True when the figures cover the steady-state window; false: the whole run (see `reason`). */
  steady_state: boolean;
  reason: string | null;
  /** ms since the run started. */
  window_start_ms: number | null;
  window_end_ms: number | null;
  energy_window_s: number | null;
  source: EnergySource;
  joules: number | null;
  /** Gross − idle watts × window; `null` when idle is unknown or the signal is under it. */
  net_joules: number | null;
  /** Output tokens produced inside the window (chunks weighted by each request's token count). */
  output_tokens: number | null;
  joules_per_output_token: number | null;
  net_joules_per_output_token: number | null;
  output_tokens_per_joule: number | null;
  avg_power_w: number | null;
  /** The used window's validity, when its meter kept samples; an invalid window gives no per-token figures. */
  validity?: WindowValidity;
  /** The steady-state window's own validity when it was measured but the whole run is used instead. */
  steady_window_validity?: WindowValidity;
}

/** The steady-state reading when usable (≥ 5 s and the meter's floor), else the whole run, flagged; per-token figures. Pure. */
export function steadyStateEnergy(input: {
  window: { start_ms: number; end_ms: number } | null;
  window_reason: string | null;
  steady: WindowReading | null;
  run: WindowReading | null;
  run_start_ms: number;
  run_end_ms: number;
  idle: Pick<IdleCalibration, 'status' | 'watts'>;
  floor_ms: number;
  records: LoadColumns | readonly LoadRecord[];
}): SteadyStateEnergy {
  let reason: string | null = input.window_reason;
  let steady = false;
  let reading: WindowReading | null = input.run;
  let start = input.run_start_ms;
  let end = input.run_end_ms;
  if (input.window && input.steady) {
    const len = input.window.end_ms - input.window.start_ms;
    if (len < MIN_STEADY_WINDOW_MS) reason = `steady-state window ${round(len / 1000, 3)} s is shorter than ${MIN_STEADY_WINDOW_MS / 1000} s`;
    else if (len < input.floor_ms || input.steady.below_floor) reason = `steady-state window ${round(len, 1)} ms is below the meter's floor (${input.floor_ms} ms)`;
    else if (input.steady.joules === null) reason = 'the meter read nothing over the steady-state window';
    else if (input.steady.validity?.valid === false) reason = `the steady-state window is not valid (${input.steady.validity.reasons.join('; ')})`;
    else {
      steady = true;
      reason = null;
      reading = input.steady;
      start = input.window.start_ms;
      end = input.window.end_ms;
    }
  } else if (input.window && !input.steady && reason === null) {
    reason = 'the meter opens no windows (energy reported per request by the target)';
  }
  if (!steady && reason !== null) reason = `${reason}: the whole run is used`;
  const unused = !steady && input.steady?.validity ? { steady_window_validity: input.steady.validity } : {};
  if (!reading) {
    return {
      steady_state: false,
      reason: reason ?? 'no meter window',
      window_start_ms: null,
      window_end_ms: null,
      energy_window_s: null,
      source: 'none',
      joules: null,
      net_joules: null,
      output_tokens: null,
      joules_per_output_token: null,
      net_joules_per_output_token: null,
      output_tokens_per_joule: null,
      avg_power_w: null,
      ...unused,
    };
  }
  const window_s = (end - start) / 1000;
  const invalid = reading.validity?.valid === false;
  // Energy per token only from a valid window; the gross reading stays, beside its validity.
  const gross = reading.joules;
  const net = netOf(gross, input.idle, window_s);
  const tokens = tokensBetween(input.records, steady ? start : -Infinity, steady ? end : Infinity);
  const per = (j: number | null): number | null => (invalid || j === null || tokens === null || tokens <= 0 ? null : round(j / tokens, 9));
  return {
    steady_state: steady,
    reason,
    window_start_ms: round(start),
    window_end_ms: round(end),
    energy_window_s: round(window_s, 6),
    source: reading.source,
    joules: round(gross, 6),
    net_joules: round(net, 6),
    output_tokens: tokens === null ? null : round(tokens, 3),
    joules_per_output_token: per(gross),
    net_joules_per_output_token: per(net),
    output_tokens_per_joule: invalid || gross === null || gross <= 0 || tokens === null ? null : round(tokens / gross, 6),
    avg_power_w: gross === null || window_s <= 0 ? null : round(gross / window_s, 6),
    ...(reading.validity ? { validity: reading.validity } : {}),
    ...unused,
  };
}

function netOf(gross: number | null, idle: Pick<IdleCalibration, 'status' | 'watts'>, window_s: number): number | null {
  if (gross === null) return null;
  if (idle.status === 'marginal') return gross;
  if (idle.status !== 'measured' || idle.watts === null) return null;
  const net = gross - idle.watts * window_s;
  return net < 0 ? null : net;
}

/**
 * Output tokens produced in [start, end] (ms since the run started), each request's spread evenly over its
 * chunks (at its last byte if none); `null` when a completed request's count is unknown. `only` keeps some requests.
 */
export function tokensBetween(records: LoadColumns | readonly LoadRecord[], start_ms: number, end_ms: number, only?: (r: LoadRecord) => boolean): number | null {
  let total = 0;
  for (const r of LoadColumns.from(records).records()) {
    if (!r.ok || (only && !only(r))) continue;
    if (r.output_tokens === null) return null;
    const times = r.token_times_ms;
    if (times.length === 0) {
      const at = r.sent_at_ms + r.e2e_ms;
      if (at >= start_ms && at <= end_ms) total += r.output_tokens;
      continue;
    }
    const each = r.output_tokens / times.length;
    for (const t of times) {
      const at = r.sent_at_ms + t;
      if (at >= start_ms && at <= end_ms) total += each;
    }
  }
  return total;
}
