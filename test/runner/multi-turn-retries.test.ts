import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Case, Suite } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { createOllamaTarget } from '../../src/targets/ollama/target.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';

// An MT-Bench-shaped suite: two-turn questions, asked as conversations by chat targets.
const cases: Case[] = Array.from({ length: 4 }, (_, i) => ({
  id: `mt-${i}`,
  turns: [`Question ${i}?`, `And a follow-up to ${i}?`],
  expected: null,
  dataset: 'writing',
  weight: 1,
  tags: [],
}));
const suite: Suite = { name: 'mt', version: '1', scorer: 'substring', cases, source: 'test' };

describe('turns of a conversation are not retries', () => {
  it('openai, fault-free server: every request sent once, retry_count 0', async () => {
    const s = await startFakeOpenAI(() => ({ kind: 'stream', text: 'fine', usage: { prompt_tokens: 5, completion_tokens: 1 } }));
    const target = new OpenAITarget({ endpoint: s.url, model: 'm', retry: { max_attempts: 3, backoff_base_s: 0, backoff_max_s: 0 } });
    try {
      const out = await run({ suite, target, idle_ms: 0 });
      assert.equal(s.seen.length, 8, 'two requests a case');
      assert.equal(out.report.retry_count, 0);
      for (const r of out.results) {
        assert.equal(r.attempts, 1, r.case_id);
        assert.deepEqual(r.turns!.map((t) => t.attempts), [1, 1]);
      }
    } finally {
      await target.close();
      await s.close();
    }
  });

  it('openai: a re-sent turn is one retry, counted once', async () => {
    // The second request (case 0, turn 2) fails once with a 503 and is sent again.
    const s = await startFakeOpenAI((_req, n) => (n === 1 ? { kind: 'status', status: 503 } : { kind: 'plain', text: 'fine' }));
    const target = new OpenAITarget({ endpoint: s.url, model: 'm', retry: { max_attempts: 3, backoff_base_s: 0, backoff_max_s: 0 } });
    try {
      const out = await run({ suite, target, idle_ms: 0 });
      assert.equal(s.seen.length, 9);
      assert.equal(out.report.retry_count, 1);
      assert.equal(out.results[0]!.attempts, 2);
      assert.deepEqual(out.results[0]!.turns!.map((t) => t.attempts), [1, 2]);
      assert.deepEqual(out.results.slice(1).map((r) => r.attempts), [1, 1, 1]);
    } finally {
      await target.close();
      await s.close();
    }
  });

  it('ollama /api/chat: retry_count 0', async () => {
    const fake = new FakeOllama({ models: { tiny: { parameter_count: 1e9 } }, load_ms: 0 });
    await fake.start();
    try {
      const out = await run({ suite, target: createOllamaTarget({ model: 'tiny', base_url: fake.url, num_predict: 2 }), idle_ms: 0 });
      assert.equal(fake.seen.filter((r) => r.path === '/api/chat').length, 8);
      assert.equal(out.report.retry_count, 0);
      assert.ok(out.results.every((r) => r.attempts === 1 && r.turns!.length === 2));
    } finally {
      await fake.stop();
    }
  });
});
