import { gamma, seededRng } from './random.js';

/** How requests arrive in an open-loop load run. */
interface ScheduleOptions {
  /** Mean requests per second; `Infinity` sends every request at once. */
  request_rate: number;
  /** Gamma shape of the inter-arrival gaps (vLLM's `--burstiness`): 1 is Poisson, below 1 burstier, above 1 more even. */
  burstiness: number;
  num_requests: number;
  /** Seeds the gaps: the same seed gives the same schedule. */
  seed: number;
}

/**
 * Planned send times, ms after the start: the first at 0, then Gamma(burstiness, 1 / (rate × burstiness)) gaps,
 * vLLM `bench serve`'s arrival process without its rescaling of the last arrival to N/rate. Pure.
 */
export function planSchedule(o: ScheduleOptions): Float64Array {
  if (!Number.isInteger(o.num_requests) || o.num_requests < 0) throw new RangeError(`num_requests must be a whole number >= 0, got ${o.num_requests}`);
  if (!(o.request_rate > 0)) throw new RangeError(`request_rate must be > 0 (or Infinity), got ${o.request_rate}`);
  if (!(o.burstiness > 0) || !Number.isFinite(o.burstiness)) throw new RangeError(`burstiness must be a finite number > 0, got ${o.burstiness}`);
  const planned = new Float64Array(o.num_requests);
  if (o.request_rate === Infinity) return planned; // every request at 0
  const rng = seededRng(o.seed);
  const scale_s = 1 / (o.request_rate * o.burstiness);
  let t_ms = 0;
  for (let i = 1; i < o.num_requests; i++) {
    t_ms += gamma(rng, o.burstiness, scale_s) * 1000;
    planned[i] = t_ms;
  }
  return planned;
}
