import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { runInferLlamaCpp } from '../../src/infer/llamacpp.js';
import { importNodeLlamaCpp } from '../../src/targets/llamacpp/binding.js';
import { LlamaEngine } from '../../src/targets/llamacpp/engine.js';
import { parseLlamaPerf } from '../../src/targets/llamacpp/perf.js';
import { createLlamaCppTarget, defaultMaxTokens, llamaCppOptionsFromSpec } from '../../src/targets/llamacpp/target.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { cli } from '../helpers/cli.js';
import { tinyLlamaGguf, writeTinyGguf } from '../helpers/tiny-gguf.js';

// One thread everywhere: llama.cpp's worker threads spin, and a loaded CI box punishes more.
const PROMPT = 'What is the capital of France? Answer in one word.';
let dir: string;
let model: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'jb-llama-'));
  model = join(dir, 'tiny.gguf');
  writeTinyGguf(model);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const aCase = (prompt = PROMPT) => ({ id: 'c1', prompt, expected: null, dataset: 'router', weight: 1, tags: [] });

describe('tiny GGUF generator', () => {
  it('writes the same bytes for the same seed, a GGUF v3 header, about half a megabyte', () => {
    const a = tinyLlamaGguf();
    assert.deepEqual(a, tinyLlamaGguf());
    assert.notDeepEqual(a, tinyLlamaGguf({ seed: 2 }));
    assert.equal(a.subarray(0, 4).toString('ascii'), 'GGUF');
    assert.equal(a.readUInt32LE(4), 3);
    assert.ok(a.length > 300_000 && a.length < 1_000_000, `${a.length} bytes`);
  });
});

describe('llama.cpp perf counters', () => {
  it('parses llama_perf_context_print lines and refuses garbage', () => {
    const text = [
      'llama_perf_context_print:        load time =    2304.01 ms',
      'llama_perf_context_print: prompt eval time =       4.13 ms /    59 tokens (    0.07 ms per token, 14282.26 tokens per second)',
      'llama_perf_context_print:        eval time =       1.47 ms /     7 runs   (    0.21 ms per token,  4778.16 tokens per second)',
    ].join('\n');
    assert.deepEqual(parseLlamaPerf(text), { prompt_eval_ms: 4.13, prompt_eval_tokens_printed: 59, eval_ms: 1.47, eval_runs_printed: 7 });
    assert.equal(parseLlamaPerf('prompt eval time = 4.13 ms / 59 tokens'), null);
    assert.equal(parseLlamaPerf(''), null);
  });
});

describe('llamacpp target', () => {
  it('generates tokens through the GGUF chat template, with the library counters consistent', async () => {
    const t = await createLlamaCppTarget({ model_path: model, threads: 1, max_tokens: 12 });
    try {
      const a = await t.answer({ prompt: PROMPT, case: aCase() });
      const m = (a.meta as { llamacpp: Record<string, unknown> }).llamacpp;
      assert.equal(a.usage?.completion_tokens, 12, 'greedy decoding of random weights runs to max_tokens');
      assert.equal(m.decode_tokens, a.usage?.completion_tokens, 'decode tokens = output tokens');
      assert.ok((m.prompt_tokens as number) > 10);
      assert.equal(m.prompt_tokens_reused, 0, 'the first prompt on a fresh context evaluates every token');
      assert.equal(m.prompt_tokens_evaluated, m.prompt_tokens);
      assert.equal(m.prefill_kind, 'fresh');
      assert.ok((m.prefill_ms as number) > 0 && (m.decode_ms as number) > 0);
      assert.ok((m.model_load_ms as number) > 0);
      const times = m.token_times_ms as number[];
      assert.ok(times.length <= 12);
      for (let i = 1; i < times.length; i++) assert.ok(times[i]! >= times[i - 1]!, 'token timestamps never go back');
      if (times.length > 0) assert.equal(a.ttft_ms, times[0]);
      // The same prompt again: the KV prefix is reused, and the counters say so (seed 004 rule 2).
      const b = await t.answer({ prompt: PROMPT, case: aCase() });
      const n = (b.meta as { llamacpp: Record<string, unknown> }).llamacpp;
      assert.equal(b.text, a.text, 'temperature 0 and a seed: the same answer');
      assert.ok((n.prompt_tokens_reused as number) > 0);
      assert.equal(n.prefill_kind, 'cached-prefix');
      assert.ok((n.prompt_tokens_evaluated as number) < (m.prompt_tokens_evaluated as number));
    } finally {
      await t.close?.();
    }
  });

  it('refuses a prompt that does not fit the context instead of letting llama.cpp drop part of it', async () => {
    const e = new LlamaEngine({ model_path: model, threads: 1, ctx: 64 });
    try {
      await assert.rejects(e.generate(PROMPT.repeat(60), { max_tokens: 8, temperature: 0, seed: 1 }), (err: JoulebenchError) => err.code === 'E_INPUT' && /the context holds \d+ \(raise --ctx/.test(err.message));
    } finally {
      await e.unload();
    }
  });

  it('serves as the cascade neural stage', async () => {
    const neural = await createLlamaCppTarget({ model_path: model, threads: 1, max_tokens: 4 });
    const cascade = createReferenceCascade({ neural });
    try {
      const a = await cascade.answer({ prompt: 'Write a haiku about unmeasured energy.', case: aCase('Write a haiku about unmeasured energy.') });
      assert.equal(a.stage, 'neural');
      assert.equal(a.usage?.completion_tokens, 4);
      // The neural stage passes the library's counters on, as the bare target does.
      const m = (a.meta as { llamacpp?: Record<string, unknown> } | undefined)?.llamacpp;
      assert.ok(m, 'meta.llamacpp reaches the cascade answer');
      assert.equal(m.decode_tokens, 4);
      assert.ok((m.decode_ms as number) > 0);
      assert.match(cascade.id, /llamacpp:tiny\.gguf/);
    } finally {
      await cascade.close();
    }
  });

  it('validates its settings and names the key', () => {
    assert.throws(() => llamaCppOptionsFromSpec({ kind: 'llamacpp' }), /target\.model_path/);
    assert.throws(() => llamaCppOptionsFromSpec({ kind: 'llamacpp', model_path: 'm', threads: 0 }), /target\.threads/);
    assert.throws(() => llamaCppOptionsFromSpec({ kind: 'llamacpp', model_path: 'm', gpu_layers: -1 }), /target\.gpu_layers/);
    assert.equal(defaultMaxTokens({ dataset: 'x', choices: ['a', 'b'] }), 16);
    assert.equal(defaultMaxTokens({ dataset: 'router' }), 64);
    assert.equal(defaultMaxTokens({ dataset: 'mt' }), 256);
  });

  it('a missing package is one clear line naming the version to install', async () => {
    await assert.rejects(importNodeLlamaCpp('node-llama-cpp-not-installed-here'), (e: JoulebenchError) => e.code === 'E_TARGET' && /node-llama-cpp@3\.21\.1, which is not installed/.test(e.message) && !e.message.includes('\n'));
  });

  it('a file that is not a GGUF is E_INPUT naming --model-path', async () => {
    const bad = join(dir, 'bad.gguf');
    writeFileSync(bad, 'not a model');
    await assert.rejects(createLlamaCppTarget({ model_path: bad, threads: 1 }), (e: JoulebenchError) => e.code === 'E_INPUT' && e.message.startsWith(`--model-path ${bad}`));
  });
});

describe('infer --target llamacpp (library)', () => {
  it('cold runs load afresh, warm runs reuse the cached prefix and are never summarised as prefill', async () => {
    const file = await runInferLlamaCpp({
      model_paths: [model],
      threads: ['default', 1],
      // The t=default arm's count comes from the CPU topology: one capped at one thread so a loaded CI box stays quick.
      max_threads: 1,
      runs: 2,
      warmup: 1,
      cold: 2,
      prompt: PROMPT,
      prompt_source: 'test',
      num_predict: 6,
      seed: 42,
      temperature: 0,
      meter: null,
      gpu_snapshot_cmd: null,
      peak: { flops: 1e15, source: 'test' },
      cpu_default_peak: null,
      host: {},
      argv: [],
    });
    assert.equal(file.target.kind, 'llamacpp');
    const arm = file.arms.find((a) => a.num_thread === 1)!;
    assert.equal(arm.cold_load.length, 2);
    for (const r of arm.cold_load) {
      assert.equal(r.prefill_kind, 'cold');
      assert.equal(r.fresh_load, true);
      assert.ok(r.load_duration_ns! > 0, 'a cold run pays a model load');
      assert.equal(r.llamacpp?.prompt_tokens_reused, 0);
      assert.equal(r.prompt_eval_count, r.llamacpp?.prompt_tokens);
      assert.ok(r.ttft_ms === null || r.ttft_ms >= r.load_duration_ns! / 1e6, 'fully cold TTFT includes the load');
    }
    assert.equal(arm.warmup_discarded.length, 1);
    // The warmup is the first prompt on the loaded model (a fresh-prompt prefill); it is discarded.
    assert.equal(arm.warmup_discarded[0]!.llamacpp!.prompt_tokens_reused, 0);
    for (const r of [...arm.warmup_discarded, ...arm.runs]) {
      assert.equal(r.prefill_kind, 'cached-prefix');
      assert.equal(r.load_duration_ns, 0, 'warm runs pay no load');
      assert.equal(r.llamacpp!.decode_tokens, 6);
    }
    for (const r of arm.runs) assert.ok(r.llamacpp!.prompt_tokens_reused > 0, 'the repeated prompt is served from the KV cache');
    assert.equal(arm.parameter_count, tinyParams());
    assert.equal(arm.receipts.cpu_only_receipt, true);
    const row = file.summary.arms.find((a) => a.id === arm.id)!;
    assert.ok(row.stats, 'the arm is summarised');
    assert.equal(file.summary.arms.length, 2, 'the default-thread arm plus t=1');
  });
});

describe('CLI', () => {
  it('run --target llamacpp and the embedded default with $JOULEBENCH_HOME/models/default.gguf', async () => {
    const home = join(dir, 'home');
    const echo = await cli(['run', '--suite', 'router', '--no-history', '-o', join(dir, 'echo.json')], { env: { JOULEBENCH_HOME: home } });
    assert.equal(echo.code, 0, echo.stderr);
    assert.match(echo.stdout.split('\n')[0]!, /^neural stage: echo \(no model: .*default\.gguf is absent/);
    mkdirSync(join(home, 'models'), { recursive: true });
    writeTinyGguf(join(home, 'models', 'default.gguf'));
    const real = await cli(['run', '--suite', 'router', '--threads', '1', '--max-tokens', '4', '--no-history', '--meter', 'estimate', '-o', join(dir, 'real.json')], { env: { JOULEBENCH_HOME: home } });
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout.split('\n')[0]!, /^neural stage: llamacpp, .*default\.gguf$/);
    const lines = readFileSync(join(dir, 'real.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const neural = lines.filter((l) => l.record === 'case' && l.stage === 'neural');
    assert.ok(neural.length >= 9);
    assert.ok(neural.every((l) => l.completion_tokens === 4));
    // The neural stage's own timings reach each results line (decode tokens = output tokens).
    assert.ok(neural.every((l) => l.meta?.llamacpp?.decode_tokens === 4 && typeof l.meta.llamacpp.prefill_ms === 'number'));
    assert.ok(neural.every((l) => 'j_per_output_token' in l.meta));
  });

  it('--target llamacpp with --meter estimate: energy labelled estimate, J per output token per case', async () => {
    const out = join(dir, 'direct.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'llamacpp', '--model-path', model, '--threads', '1', '--max-tokens', '4', '--meter', 'estimate', '--no-history', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const receipt = JSON.parse(readFileSync(join(dir, 'direct.receipt.json'), 'utf8'));
    assert.equal(receipt.meter.coefficients.cpu_watts_per_core, receipt.meter.cpu_coefficient.watts_per_core, 'the figure the label names is the one used');
    const lines = readFileSync(join(dir, 'direct.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.record === 'case');
    assert.equal(lines.length, 30);
    for (const l of lines) {
      assert.equal(l.meta.llamacpp.decode_tokens, l.completion_tokens);
      if (l.joules === null) continue;
      assert.equal(l.energy_source, 'estimate');
      assert.ok(Math.abs(l.meta.j_per_output_token - l.joules / l.completion_tokens) < 1e-9);
      assert.ok(Math.abs(l.meta.output_tokens_per_j - l.completion_tokens / l.joules) < 1e-6);
    }
  });

  it('--model-path without a llamacpp target is a usage error', async () => {
    const r = await cli(['run', '--suite', 'router', '--target', 'echo', '--model-path', model, '--no-history']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--model-path applies to --target llamacpp/);
  });
});

/** Parameters of the default tiny model: embeddings and output (2 × 321 × 64), norms, 2 layers. */
function tinyParams(): number {
  const vocab = 3 + 256 + 1 + 52 + 10;
  const w = 64;
  const ffn = 128;
  return 2 * vocab * w + w + 2 * (2 * w + 4 * w * w + 3 * w * ffn);
}
