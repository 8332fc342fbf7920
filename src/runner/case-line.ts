import type { CaseResult } from '../core/types.js';

/**
 * A CaseResult's results-file line (without its newline): every key in one fixed order, whatever order
 * the result was built in. A required key whose value is `undefined` is written `null` (JSON.stringify
 * would drop it, and readers expect it); an optional one is left out. One object literal of a fixed
 * shape, so JSON.stringify takes its fast path.
 */
export function caseLine(r: CaseResult): string {
  const line = {
    record: 'case',
    phase: r.phase ?? null,
    pass: r.pass ?? null,
    index: r.index ?? null,
    case_id: r.case_id ?? null,
    dataset: r.dataset ?? null,
    response: r.response ?? null,
    stage: r.stage ?? null,
    expected: r.expected ?? null,
    passed: r.passed ?? null,
    score: r.score ?? null,
    parsed: r.parsed,
    weight: r.weight ?? null,
    joules: r.joules ?? null,
    energy_source: r.energy_source ?? null,
    below_floor: r.below_floor ?? null,
    energy_invalid: r.energy_invalid,
    latency_ms: r.latency_ms ?? null,
    ttft_ms: r.ttft_ms ?? null,
    tpot_ms: r.tpot_ms ?? null,
    itl_ms: r.itl_ms,
    prompt_tokens: r.prompt_tokens ?? null,
    completion_tokens: r.completion_tokens ?? null,
    cached_prompt_tokens: r.cached_prompt_tokens,
    reasoning_tokens: r.reasoning_tokens,
    cost_usd: r.cost_usd ?? null,
    attempts: r.attempts ?? null,
    retry_overhead_ms: r.retry_overhead_ms ?? null,
    error: r.error ?? null,
    by_domain: r.by_domain,
    joules_range: r.joules_range,
    trace: r.trace,
    meta: r.meta,
    turns: r.turns,
    prompt: r.prompt,
  } satisfies Record<keyof CaseResult, unknown>; // fails to compile when CaseResult gains a key not written here
  return JSON.stringify(line);
}
