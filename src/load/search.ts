import type { LoadBlock } from './block.js';
import type { Slo } from './metrics.js';

/** `--find-max-rate`: the highest request rate whose goodput share meets a target. */
export interface RateSearchRule {
  start_rate: number;
  goodput_target: number;
  /** `--max-request-rate`: the doubling never goes above it; `null`: no cap. */
  max_request_rate: number | null;
}

/** Bisection stops when the lowest failing rate is within this fraction above the highest passing one. */
const SEARCH_TOLERANCE = 0.05;
/** The search stops after this many load runs whatever it found. */
export const SEARCH_MAX_STEPS = 20;
/** Halving from a failing start stops below start ÷ this. */
const SEARCH_FLOOR_DIVISOR = 1024;

/** One load run of the search. */
export interface RateSearchStep {
  step: number;
  request_rate: number;
  /** Requests that met every SLO ÷ requests sent (failures count as missing it). */
  goodput_share: number | null;
  passed: boolean;
  request_goodput: number | null;
  output_goodput: number | null;
  p99_ttft_ms: number | null;
  p99_tpot_ms: number | null;
  joules_per_output_token: number | null;
  energy_source: string;
  report: string | null;
  results: string;
}

export interface RateSearch {
  slo: Slo;
  goodput_target: number;
  start_rate: number;
  max_request_rate_cap: number | null;
  stopping_rule: string;
  steps: RateSearchStep[];
  /** The highest rate that met the target; `null` when none did. */
  max_request_rate: number | null;
  /** Why the search stopped. */
  stopped: string;
}

export const RATE_SEARCH_FORMAT = 'joulebench-rate-search/1';

export function stoppingRule(rule: RateSearchRule): string {
  return (
    `double the rate from ${rule.start_rate}/s while each run meets goodput share ≥ ${rule.goodput_target}` +
    (rule.max_request_rate !== null ? ` (never above --max-request-rate ${rule.max_request_rate}/s; stop when it passes)` : '') +
    `, or halve it while each run misses; then bisect between the highest passing and the lowest failing rate until the failing rate is within ${SEARCH_TOLERANCE * 100} % of the passing one; at most ${SEARCH_MAX_STEPS} runs`
  );
}

/** The step's figures from its load block. Pure. */
export function searchStep(step: number, load: LoadBlock, target: number, files: { report: string | null; results: string }): RateSearchStep {
  const s = load.serving;
  const share = s.good_requests === null || load.num_requests === 0 ? null : s.good_requests / load.num_requests;
  const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
  return {
    step,
    request_rate: load.request_rate === 'inf' ? Infinity : load.request_rate,
    goodput_share: share === null ? null : Math.round(share * 1e4) / 1e4,
    passed: share !== null && share >= target,
    request_goodput: s.request_goodput,
    output_goodput: s.output_goodput ?? null,
    p99_ttft_ms: num(s['p99_ttft_ms']),
    p99_tpot_ms: num(s['p99_tpot_ms']),
    joules_per_output_token: load.energy.joules_per_output_token,
    energy_source: load.energy.source,
    ...files,
  };
}

/** The next rate to run, or the result: doubling (or halving), then bisection (see {@link stoppingRule}). Pure. */
export function nextRate(steps: readonly Pick<RateSearchStep, 'request_rate' | 'passed'>[], rule: RateSearchRule): { rate: number } | { done: string; max_request_rate: number | null } {
  if (steps.length === 0) return { rate: rule.max_request_rate !== null ? Math.min(rule.start_rate, rule.max_request_rate) : rule.start_rate };
  const failing = steps.filter((s) => !s.passed).map((s) => s.request_rate);
  const hi = failing.length > 0 ? Math.min(...failing) : null;
  const passing = steps.filter((s) => s.passed && (hi === null || s.request_rate < hi)).map((s) => s.request_rate);
  const lo = passing.length > 0 ? Math.max(...passing) : null;
  const found = (done: string) => ({ done, max_request_rate: lo });
  if (steps.length >= SEARCH_MAX_STEPS) return found(`${SEARCH_MAX_STEPS} runs made`);
  if (hi === null) {
    if (lo !== null && lo === rule.max_request_rate) return found(`--max-request-rate ${lo}/s met the target`);
    return { rate: rule.max_request_rate !== null ? Math.min(2 * lo!, rule.max_request_rate) : 2 * lo! };
  }
  if (lo === null) {
    if (hi / 2 < rule.start_rate / SEARCH_FLOOR_DIVISOR) return found(`no rate down to ${hi}/s met the target`);
    return { rate: hi / 2 };
  }
  if (hi <= lo * (1 + SEARCH_TOLERANCE)) return found(`${hi}/s failed within ${SEARCH_TOLERANCE * 100} % of ${lo}/s`);
  return { rate: round4((lo + hi) / 2) };
}

function round4(v: number): number {
  return Number(v.toPrecision(4));
}
