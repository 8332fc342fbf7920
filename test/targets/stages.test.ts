import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Case, Suite, Target } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { createLlamaCppTarget } from '../../src/targets/llamacpp/target.js';
import { createOllamaTarget } from '../../src/targets/ollama/target.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { createReplayTarget } from '../../src/targets/replay.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-stages-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const cases: Case[] = ['a', 'b', 'c'].map((id) => ({ id, prompt: `Say ${id}.`, expected: id, dataset: 'd', weight: 1, tags: [] }));
const suite: Suite = { name: 's', version: '1', scorer: 'substring', cases, source: 'test' };
const ONE_MODEL = { cache: 0, kv: 0, graph: 0, neural: 3 };

async function stagesOf(target: Target): Promise<Record<string, number>> {
  try {
    const out = await run({ suite, target, idle_ms: 0 });
    assert.ok(out.results.every((r) => r.error === null && r.stage === 'neural'), JSON.stringify(out.results.map((r) => [r.stage, r.error])));
    return out.report.stage_distribution;
  } finally {
    await target.close?.();
  }
}

describe('a target that is one model counts its answered cases as neural', () => {
  it('openai', async () => {
    const s = await startFakeOpenAI(() => ({ kind: 'plain', text: 'ok' }));
    try {
      assert.deepEqual(await stagesOf(new OpenAITarget({ endpoint: s.url, model: 'm' })), ONE_MODEL);
    } finally {
      await s.close();
    }
  });

  it('ollama', async () => {
    const fake = new FakeOllama({ models: { tiny: { parameter_count: 1e9 } }, load_ms: 0 });
    await fake.start();
    try {
      assert.deepEqual(await stagesOf(createOllamaTarget({ model: 'tiny', base_url: fake.url, num_predict: 2 })), ONE_MODEL);
    } finally {
      await fake.stop();
    }
  });

  it('llamacpp', async () => {
    const model = join(dir, 'tiny.gguf');
    writeTinyGguf(model);
    assert.deepEqual(await stagesOf(await createLlamaCppTarget({ model_path: model, threads: 1, max_tokens: 2 })), ONE_MODEL);
  });

  it('replay of a fixture (no stage recorded)', async () => {
    const file = join(dir, 'answers.jsonl');
    writeFileSync(file, cases.map((c) => JSON.stringify({ id: c.id, answer: c.id })).join('\n') + '\n');
    assert.deepEqual(await stagesOf(createReplayTarget(file)), ONE_MODEL);
  });

  it('a failed case has no stage', async () => {
    const s = await startFakeOpenAI(() => ({ kind: 'status', status: 400 }));
    const target = new OpenAITarget({ endpoint: s.url, model: 'm' });
    try {
      const out = await run({ suite, target, idle_ms: 0 });
      assert.ok(out.results.every((r) => r.error !== null && r.stage === null));
      assert.deepEqual(out.report.stage_distribution, { cache: 0, kv: 0, graph: 0, neural: 0 });
    } finally {
      await target.close();
      await s.close();
    }
  });
});
