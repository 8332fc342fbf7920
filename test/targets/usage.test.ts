import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Suite } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { createOllamaTarget } from '../../src/targets/ollama/target.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { startFakeOpenAI, type FakeServer, type Reply } from '../helpers/fake-openai.js';

const suite: Suite = { name: 's', version: '1', scorer: 'substring', cases: [{ id: 'q', prompt: 'Say ok.', expected: 'ok', dataset: 'd', weight: 1, tags: [] }], source: 'test' };
const prices = { input_usd_per_mtok: 1, output_usd_per_mtok: 2 };
const servers: FakeServer[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

/** One case against an openai server that always sends `reply`; retry on, so a retried usage error would show. */
async function openaiCase(reply: Reply, max_tokens = 16) {
  const s = await startFakeOpenAI(() => reply);
  servers.push(s);
  const target = new OpenAITarget({ endpoint: s.url, model: 'm', prices, max_tokens, retry: { max_attempts: 3, backoff_base_s: 0, backoff_max_s: 0 } });
  try {
    const out = await run({ suite, target, idle_ms: 0 });
    return { r: out.results[0]!, report: out.report, sent: s.seen.length };
  } finally {
    await target.close();
  }
}

// Usage as a fake server sends it: the types say numbers, the wire says whatever it likes.
const usage = (u: Record<string, unknown>) => u as { prompt_tokens: number; completion_tokens: number };

describe('openai: usage that cannot be a token count fails the case, naming the field', () => {
  it('negative counts (JSON reply): an error, no dollars, not retried', async () => {
    const { r, report, sent } = await openaiCase({ kind: 'plain', text: 'ok', usage: usage({ prompt_tokens: -5, completion_tokens: -3 }) });
    assert.equal(r.error?.code, 'E_MALFORMED');
    assert.equal(r.error?.message, 'usage.prompt_tokens -5 is negative');
    assert.equal(r.cost_usd, null);
    assert.equal(r.prompt_tokens, null);
    assert.equal(report.total_usd, null);
    assert.equal(sent, 1, 'a bad count is the reply\'s fault: not sent again');
  });

  it('a negative completion count in a stream\'s usage chunk', async () => {
    const { r } = await openaiCase({ kind: 'stream', text: 'ok', usage: usage({ prompt_tokens: 5, completion_tokens: -3 }) });
    assert.equal(r.error?.message, 'usage.completion_tokens -3 is negative');
    assert.equal(r.cost_usd, null);
  });

  it('a fractional count and a count that is not a number', async () => {
    assert.equal((await openaiCase({ kind: 'stream', text: 'ok', usage: usage({ prompt_tokens: 2.5, completion_tokens: 1 }) })).r.error?.message, 'usage.prompt_tokens 2.5 is not a whole number');
    assert.equal((await openaiCase({ kind: 'plain', text: 'ok', usage: usage({ prompt_tokens: 2, completion_tokens: '7' }) })).r.error?.message, 'usage.completion_tokens "7" is not a number');
  });

  it('more completion tokens than 10 × max_tokens is refused; up to 10 × is kept', async () => {
    const far = await openaiCase({ kind: 'plain', text: 'ok', usage: usage({ prompt_tokens: 5, completion_tokens: 161 }) }, 16);
    assert.equal(far.r.error?.message, 'usage.completion_tokens 161 is more than 10 × the 16 tokens the request allowed');
    const near = await openaiCase({ kind: 'plain', text: 'ok', usage: usage({ prompt_tokens: 5, completion_tokens: 160 }) }, 16);
    assert.equal(near.r.error, null);
    assert.equal(near.r.completion_tokens, 160);
    assert.ok(near.r.cost_usd! > 0);
  });

  it('absent usage stays unknown (null), not an error', async () => {
    const { r } = await openaiCase({ kind: 'plain', text: 'ok' });
    assert.equal(r.error, null);
    assert.equal(r.prompt_tokens, null);
    assert.equal(r.cost_usd, null);
  });
});

describe('ollama: prompt_eval_count and eval_count are checked the same way', () => {
  async function ollamaCase(final: Record<string, unknown>, num_predict = 4) {
    const fake = new FakeOllama({ models: { tiny: { parameter_count: 1e9 } }, load_ms: 0, final });
    await fake.start();
    try {
      return (await run({ suite, target: createOllamaTarget({ model: 'tiny', base_url: fake.url, num_predict }), idle_ms: 0 })).results[0]!;
    } finally {
      await fake.stop();
    }
  }

  it('a negative, a fractional and a far-too-large count each fail the case, naming the field', async () => {
    assert.match((await ollamaCase({ eval_count: -3 })).error?.message ?? '', /\/api\/chat: eval_count -3 is negative$/);
    assert.match((await ollamaCase({ prompt_eval_count: 1.5 })).error?.message ?? '', /\/api\/chat: prompt_eval_count 1\.5 is not a whole number$/);
    assert.match((await ollamaCase({ eval_count: 41 }, 4)).error?.message ?? '', /eval_count 41 is more than 10 × the 4 tokens the request allowed$/);
    const ok = await ollamaCase({ eval_count: 40 }, 4);
    assert.equal(ok.error, null);
    assert.equal(ok.completion_tokens, 40);
  });
});
