import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CaseResult } from '../../src/core/types.js';
import { caseLine } from '../../src/runner/case-line.js';
import { metaVariants } from './fixtures/meta-variants.js';

/** A result as the runner builds it: every required key, in CaseResult's order. */
function result(over: Partial<CaseResult> = {}): CaseResult {
  const r: CaseResult = {
    record: 'case',
    phase: 'scored',
    pass: 0,
    index: 3,
    case_id: 'rt-kv-1',
    dataset: 'router',
    response: 'The speed of light is 299792458 m/s',
    stage: 'kv',
    expected: '299792458',
    passed: true,
    score: null,
    weight: 1,
    joules: 0.0015,
    energy_source: 'model',
    below_floor: false,
    latency_ms: 0.007,
    ttft_ms: null,
    tpot_ms: null,
    prompt_tokens: 0,
    completion_tokens: 0,
    cost_usd: 0,
    attempts: 1,
    retry_overhead_ms: 0,
    error: null,
  };
  return Object.assign(r, over);
}

describe('caseLine', () => {
  const variants: [string, Partial<CaseResult>][] = [
    ['a cascade hit with its trace', { trace: [{ stage: 'cache', hit: false, energy_uj: 1000 }, { stage: 'kv', hit: true, energy_uj: 500 }] }],
    ['a warmup result', { phase: 'warmup', pass: 2, passed: null }],
    ['a failed case', { response: null, stage: null, passed: false, joules: null, energy_source: 'none', error: { code: 'E_HTTP', message: 'HTTP 500: "upstream" \\ broke', status: 500 } }],
    ['a metered case with domains', { energy_source: 'rapl', joules: 12.345678, below_floor: true, by_domain: { 'package-0': { joules: 10.1, source: 'rapl' }, dram: { joules: null, source: 'none' } } }],
    ['an HTTP target with usage, meta and retries', { stage: 'openai', ttft_ms: 210.5, tpot_ms: 12.25, prompt_tokens: 1234, completion_tokens: 99, cost_usd: 0.000123, attempts: 3, retry_overhead_ms: 1500.25, meta: { model: 'gpt-x', nested: [1, { a: null }] } }],
    ['unicode and escapes in every string', { case_id: 'ü-1 "q"', dataset: 'mt\tbench', response: 'línea 1\nlínea 2 🙂 \ud83d', expected: '“x”', stage: 'neural' }],
    ['stage and source outside the usual lists', { stage: 'my-own-stage', energy_source: 'integrated-power', trace: [{ stage: 'my-own-stage', hit: true, energy_uj: null }] }],
    ['numbers JSON cannot hold', { joules: NaN, latency_ms: Infinity, score: -0, weight: 0.5 }],
    ['an empty trace and large numbers', { trace: [], index: 123_456_789_012, latency_ms: 1e21, cost_usd: 1e-9 }],
    ['a trace that is not a list of entries', { trace: [null, 3, 'x'] as unknown as CaseResult['trace'] }],
    ['a null trace', { trace: null as unknown as CaseResult['trace'] }],
    ['a stored prompt', { prompt: 'Q: what is "c"?\n\tüñí 🙂 \ud83d' }],
    ['a conversation\'s messages as its prompt', { turns: [], prompt: [{ role: 'user', content: 'hi "there"' }, { role: 'assistant', content: 'línea\n2' }, { role: 'user', content: '\u0001?' }] }],
    ['a prompt after meta and turns', { meta: { model: 'm' }, turns: [], prompt: '' }],
  ];
  for (const [name, over] of variants) {
    it(`writes ${name} byte for byte as JSON.stringify`, () => {
      const r = result(over);
      assert.equal(caseLine(r), JSON.stringify(r));
    });
  }

  it('matches JSON.stringify on 5,000 random results (every string field, number and optional part varied)', () => {
    // A small seeded generator, so a failure names a reproducible result.
    let seed = 19;
    const rand = (): number => {
      seed = (seed + 0x6d2b79f5) >>> 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const text = (): string => {
      let s = '';
      const len = Math.floor(rand() * (rand() < 0.5 ? 8 : 40));
      for (let i = 0; i < len; i++) {
        const k = rand();
        s += String.fromCharCode(k < 0.8 ? 0x20 + Math.floor(rand() * 0x5f) : k < 0.85 ? Math.floor(rand() * 0x20) : k < 0.9 ? pick([0x22, 0x5c, 0x7f]) : Math.floor(rand() * 0x10000));
      }
      return s;
    };
    const num = (): number | null =>
      pick([null, 0, 1, 7, -0, 0.001, 0.056, 12.5, 999_999_999, 1e9, 2 ** 31, 2147.483648, 1e21, -3.25, NaN, Infinity, rand() * 1e4, Math.round(rand() * 1e9) / 1e6, Math.round(rand() * 1e8) / 1e3]);
    const stages = ['cache', 'kv', 'graph', 'neural', 'none', 'openai', text()];
    for (let i = 0; i < 5000; i++) {
      const over: Partial<CaseResult> = {
        phase: pick(['scored', 'warmup'] as const),
        pass: Math.floor(rand() * 12),
        index: pick([0, 9, 10, Math.floor(rand() * 1e7), 2 ** 31 + 5]),
        case_id: text(),
        dataset: text(),
        response: rand() < 0.1 ? null : text(),
        stage: rand() < 0.1 ? null : pick(stages),
        expected: rand() < 0.1 ? null : text(),
        passed: pick([true, false, null]),
        score: num(),
        weight: pick([1, 0.5, 2, 0]),
        joules: num(),
        energy_source: pick(['model', 'rapl', 'nvml', 'estimate', 'none', 'model:api', text()]) as CaseResult['energy_source'],
        below_floor: rand() < 0.5,
        latency_ms: num() ?? 0,
        ttft_ms: num(),
        tpot_ms: num(),
        prompt_tokens: num(),
        completion_tokens: num(),
        cost_usd: num(),
        attempts: pick([1, 2, 3, 10]),
        retry_overhead_ms: num() ?? 0,
        error: rand() < 0.2 ? { code: 'E_HTTP', message: text(), ...(rand() < 0.5 ? { status: 503 } : {}) } : null,
      };
      if (rand() < 0.6) over.trace = Array.from({ length: Math.floor(rand() * 4) }, () => ({ stage: pick(stages), hit: rand() < 0.5, energy_uj: num() }));
      if (rand() < 0.2) over.meta = { model: text(), n: num() };
      else if (rand() < 0.2) over.meta = { [text()]: pick([text(), num(), true, false]), [String(Math.floor(rand() * 20))]: num(), ok: rand() < 0.5 };
      if (rand() < 0.3) over.prompt = rand() < 0.5 ? text() : [{ role: 'user', content: text() }, { role: 'assistant', content: text() }];
      assert.equal(caseLine(result(over)), JSON.stringify(result(over)), `result #${i}`);
    }
  });

  for (const [name, meta] of metaVariants()) {
    it(`writes a target's meta as JSON.stringify does: ${name}`, () => {
      const r = result({ stage: 'neural', meta: meta as CaseResult['meta'] });
      assert.equal(caseLine(r), JSON.stringify(r));
    });
  }

  it('reads a meta value once: the line holds the value read', () => {
    let reads = 0;
    const meta = {
      get v(): unknown {
        return reads++ === 0 ? 1 : 'y'.repeat(10_000);
      },
    };
    const line = caseLine(result({ stage: 'neural', meta }));
    assert.equal(reads, 1);
    assert.deepEqual((JSON.parse(line) as CaseResult).meta, { v: 1 });
  });

  it('writes an unexpected undefined in a required field as null (JSON.stringify would drop the key)', () => {
    const r = result({ response: undefined as unknown as string, weight: undefined as unknown as number });
    const parsed = JSON.parse(caseLine(r)) as Record<string, unknown>;
    assert.equal(parsed.response, null);
    assert.equal(parsed.weight, null);
    assert.deepEqual(Object.keys(parsed), Object.keys(result()), 'every key still there, in order');
  });

  it('writes the keys in the results-line order whatever order the result was built in', () => {
    const r = result({ parsed: 'B' });
    const reversed = Object.fromEntries(Object.entries(r).reverse()) as unknown as CaseResult;
    assert.equal(caseLine(reversed), caseLine(r));
    assert.deepEqual(Object.keys(JSON.parse(caseLine(reversed)) as object).slice(9, 12), ['passed', 'score', 'parsed']);
  });
});
