import type { CaseResult } from '../../src/core/types.js';

/** A scored CaseResult with sensible defaults, for building hand-made inputs to pure functions. */
export function result(over: Partial<CaseResult> = {}): CaseResult {
  return {
    record: 'case',
    phase: 'scored',
    pass: 0,
    index: 0,
    case_id: 'c',
    dataset: 'd',
    response: 'x',
    stage: 'neural',
    expected: 'x',
    passed: true,
    score: null,
    weight: 1,
    joules: 1,
    energy_source: 'model',
    below_floor: false,
    latency_ms: 1,
    ttft_ms: null,
    tpot_ms: null,
    prompt_tokens: null,
    completion_tokens: null,
    cost_usd: null,
    attempts: 1,
    retry_overhead_ms: 0,
    error: null,
    ...over,
  };
}

export const CTX = {
  suite: { name: 's', version: '1', digest: 'sha256:x' },
  target: 't',
  meter: 'model',
  warmup: 0,
  repeats: 1,
};
