import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isJoulebenchError } from '../../src/core/errors.js';
import type { Case, Suite } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { createTarget } from '../../src/targets/registry.js';
import { OllamaClient, parseParameterSize } from '../../src/targets/ollama/client.js';
import { createOllamaTarget, ollamaOptionsFromSpec } from '../../src/targets/ollama/target.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { targetContract } from './contract.js';

const c: Case = { id: 'q1', prompt: 'why does pump station two trip', expected: 'motor', dataset: 'ops', weight: 1, tags: [] };

describe('ollama target against a server that speaks Ollama', () => {
  const fake = new FakeOllama({ models: { m1: { parameter_count: 1e9 } }, load_ms: 25, prefill_ms_per_token: 1, decode_tok_s: () => 40 });
  let url = '';
  before(async () => {
    url = await fake.start();
  });
  after(() => fake.stop());

  targetContract('ollama', () => createOllamaTarget({ model: 'm1', base_url: url, num_predict: 2 }));

  it('streams /api/chat and records Ollama timings, client TTFT and usage', async () => {
    const t = createOllamaTarget({ model: 'm1', base_url: url, num_thread: 6, num_ctx: 2048, seed: 7, temperature: 0, num_predict: 5 });
    const a = await t.answer({ prompt: c.prompt!, case: c });
    assert.equal(a.text, 'the pump station trips because ');
    assert.deepEqual(a.usage, { prompt_tokens: 6, completion_tokens: 5 });
    const o = (a.meta as { ollama: Record<string, number> }).ollama;
    for (const k of ['load_duration_ns', 'prompt_eval_count', 'prompt_eval_duration_ns', 'eval_count', 'eval_duration_ns', 'total_duration_ns']) {
      assert.equal(typeof o[k], 'number', k);
    }
    assert.ok(o.load_duration_ns! >= 20e6, 'first use pays the load');
    // TTFT is measured on the client: at least load + prefill the server spent before the first chunk.
    assert.ok(a.ttft_ms! >= 25, `ttft ${a.ttft_ms}`);
    assert.equal((a.meta as { decode_tok_s: number }).decode_tok_s, 40);
    const req = fake.seen.filter((s) => s.path === '/api/chat').at(-1)!;
    assert.deepEqual(req.body!.options, { num_thread: 6, num_ctx: 2048, seed: 7, temperature: 0, num_predict: 5 });
    assert.equal(req.body!.stream, true);
    assert.deepEqual(req.body!.messages, [{ role: 'user', content: c.prompt }]);
  });

  it('a repeated prompt hits the prefix cache: no load, near-zero prompt_eval_duration', async () => {
    const t = createOllamaTarget({ model: 'm1', base_url: url, num_thread: 6, api: 'generate' });
    const a = await t.answer({ prompt: c.prompt!, case: c });
    const o = (a.meta as { ollama: Record<string, number> }).ollama;
    assert.equal(o.load_duration_ns, 0);
    assert.equal(o.prompt_eval_duration_ns, 200_000);
    assert.equal(fake.seen.at(-1)!.path, '/api/generate');
  });

  it('an unknown model is E_TARGET with the HTTP status and Ollama\'s message', async () => {
    const t = createOllamaTarget({ model: 'nope', base_url: url });
    await assert.rejects(async () => t.answer({ prompt: 'x', case: c }), (e: unknown) => {
      assert.ok(isJoulebenchError(e), 'isJoulebenchError(e)');
      assert.equal(e.code, 'E_TARGET');
      assert.equal((e as unknown as { status: number }).status, 404);
      assert.match(e.message, /HTTP 404: model 'nope' not found/);
      return true;
    });
  });

  it('an unreachable server says so in one line', async () => {
    const t = createOllamaTarget({ model: 'm1', base_url: 'http://127.0.0.1:9' });
    await assert.rejects(async () => t.answer({ prompt: 'x', case: c }), /cannot reach the server.*ollama serve/);
  });

  it('client: /api/show, /api/ps, /api/version', async () => {
    const client = new OllamaClient(url);
    assert.deepEqual(await client.show('m1'), { parameter_count: 1e9, source: 'model_info.general.parameter_count' });
    assert.equal(await client.version(), '0.12.3');
    const ps = await client.ps();
    assert.equal(ps[0]!.name, 'm1');
    assert.match(ps[0]!.expires_at!, /-07:00$/);
    assert.equal(ps[0]!.size_vram, 0);
    assert.equal(parseParameterSize('8.0B'), 8e9);
    assert.equal(parseParameterSize('270M'), 2.7e8);
  });
});

describe('ollama target settings', () => {
  it('needs a model and validates its keys (E_CONFIG naming the key)', () => {
    assert.throws(() => ollamaOptionsFromSpec({ kind: 'ollama' }), /target\.model/);
    assert.throws(() => ollamaOptionsFromSpec({ kind: 'ollama', model: 'm', num_thread: 2.5 }), /target\.num_thread/);
    assert.throws(() => ollamaOptionsFromSpec({ kind: 'ollama', model: 'm', base_url: 'localhost' }), /target\.base_url/);
    assert.deepEqual(ollamaOptionsFromSpec({ kind: 'ollama', model: 'm', temperature: 0.5, seed: 1 }), { model: 'm', temperature: 0.5, seed: 1 });
  });
});

describe('ollama through the runner and as the cascade neural backend', () => {
  const fake = new FakeOllama({ models: { m1: { parameter_count: 1e9 } }, load_ms: 2, prefill_ms_per_token: 0, reply: () => 'answer motor' });
  let url = '';
  before(async () => {
    url = await fake.start();
  });
  after(() => fake.stop());
  const suite: Suite = {
    name: 't',
    version: '1',
    scorer: 'substring',
    source: 'test',
    cases: [c, { ...c, id: 'q2', prompt: 'what is the capital of France?', expected: 'Paris' }],
  };

  it('run --target ollama: every case reaches Ollama, energy stays null (no meter measured it)', async () => {
    const target = await createTarget({ kind: 'ollama', model: 'm1', base_url: url, num_predict: 2 });
    const out = await run({ suite, target });
    assert.equal(out.results.length, 2);
    assert.equal(out.results[0]!.passed, true);
    assert.equal(out.results[0]!.joules, null);
    assert.equal(out.results[0]!.energy_source, 'none');
    assert.equal(typeof out.results[0]!.ttft_ms, 'number');
    assert.equal(out.results[0]!.completion_tokens, 2);
  });

  it('cascade with neural ollama: only what the earlier stages miss goes to Ollama', async () => {
    const before = fake.generations;
    const target = await createTarget({ kind: 'cascade', neural: { kind: 'ollama', model: 'm1', base_url: url, num_predict: 2 } });
    const out = await run({ suite, target });
    const neural = out.results.filter((r) => r.stage === 'neural');
    assert.equal(fake.generations - before, neural.length);
    assert.ok(neural.length >= 1, 'neural.length >= 1');
    assert.ok(out.results.some((r) => r.stage !== 'neural'), 'the KV stage answers the capital of France');
    // Ollama reports no energy, so a case that reached it has unknown energy, not 0.
    assert.equal(neural[0]!.joules, null);
  });
});
