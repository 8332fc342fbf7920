import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Case } from '../../src/core/types.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { startFakeOpenAI, type FakeServer, type Reply } from '../helpers/fake-openai.js';

const CASE: Case = { id: 'c', prompt: 'p', expected: null, dataset: 'd', weight: 1, tags: [] };
const sse = (...chunks: unknown[]): string => chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('');
const piece = (content: unknown, extra: Record<string, unknown> = {}) => ({ choices: [{ index: 0, delta: { content }, ...extra }] });

let current: Reply = { kind: 'status', status: 500 };
let server: FakeServer;
before(async () => {
  server = await startFakeOpenAI(() => current);
});
after(() => server.close());

async function ask(body: string, opts: { max_reply_bytes?: number; stream?: boolean } = {}): Promise<{ text: string } | { error: string; code: string }> {
  current = { kind: 'raw', status: 200, contentType: opts.stream === false ? 'application/json' : 'text/event-stream', body };
  const t = new OpenAITarget({ endpoint: server.url, model: 'm', ...(opts.max_reply_bytes ? { max_reply_bytes: opts.max_reply_bytes } : {}), stream: opts.stream ?? true });
  try {
    const a = await t.answer({ prompt: 'p', case: CASE });
    return { text: a.text };
  } catch (e) {
    const err = e as { message: string; code: string };
    return { error: err.message, code: err.code };
  } finally {
    await t.close();
  }
}

describe('openai streaming replies are validated like plain ones', () => {
  const bad: [string, string, RegExp][] = [
    ['chunks without choices', sse({ id: 'x' }, '[DONE]'), /has no choices/],
    ['an empty choices list without usage', sse({ choices: [] }, '[DONE]'), /choices is empty/],
    ['choices that is not an array', sse({ choices: { delta: { content: 'hi' } } }, '[DONE]'), /choices is not an array/],
    ['content null', sse(piece(null), '[DONE]'), /delta\.content is null/],
    ['content a number', sse(piece(42), '[DONE]'), /delta\.content is a number/],
    ['no [DONE] and no finish_reason', sse(piece('Par'), piece('is')), /without \[DONE\] and without a finish_reason/],
  ];
  for (const [what, body, why] of bad) {
    it(`${what}: a per-case error naming it, not an empty answer`, async () => {
      const r = await ask(body);
      assert.ok('error' in r, `expected an error, got ${JSON.stringify(r)}`);
      assert.equal(r.code, 'E_MALFORMED');
      assert.match(r.error, why);
    });
  }

  it('valid shapes still answer: role chunk with content null, finish_reason without [DONE], the usage-only chunk', async () => {
    const role = { choices: [{ index: 0, delta: { role: 'assistant', content: null } }] };
    assert.deepEqual(await ask(sse(role, piece('Pa'), piece('ris'), { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }, '[DONE]')), { text: 'Paris' });
    assert.deepEqual(await ask(sse(piece('Par'), piece('is', { finish_reason: 'stop' }))), { text: 'Paris' });
    assert.deepEqual(await ask(sse(piece('a'), { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }, '[DONE]')), { text: 'a' });
  });

  it('a reply larger than the limit is cut off and recorded as an error (default 4 MiB, configurable)', async () => {
    const big = JSON.stringify({ choices: [{ message: { content: 'x'.repeat(5 * 1024 * 1024) } }] });
    const plain = await ask(big, { stream: false });
    assert.ok('error' in plain);
    assert.match(plain.error, /larger than 4194304 bytes/);
    const small = await ask(sse(piece('x'.repeat(2000)), '[DONE]'), { max_reply_bytes: 1024 });
    assert.ok('error' in small);
    assert.match(small.error, /larger than 1024 bytes \(target\.max_reply_bytes\)/);
    assert.deepEqual(await ask(sse(piece('ok'), '[DONE]'), { max_reply_bytes: 1024 }), { text: 'ok' });
  });

  it('a 16 MB stream parses in about the time a 16 MB plain reply does (no quadratic joins)', async () => {
    const limit = 64 * 1024 * 1024;
    const content = 'y'.repeat(16 * 1024 * 1024);
    // One chunk per 8 KiB of text (the realistic shape), and one giant line (the worst case for a growing buffer).
    const chunks: unknown[] = [];
    for (let i = 0; i < content.length; i += 8192) chunks.push(piece(content.slice(i, i + 8192)));
    const stream = sse(...chunks, '[DONE]');
    const oneLine = sse(piece(content), '[DONE]');
    const plainBody = JSON.stringify({ choices: [{ message: { content } }] });
    const time = async (body: string, stream: boolean) => {
      const t0 = performance.now();
      const r = await ask(body, { max_reply_bytes: limit, stream });
      assert.ok('text' in r && r.text.length === content.length, JSON.stringify(r).slice(0, 200));
      return performance.now() - t0;
    };
    const plain_ms = await time(plainBody, false);
    const stream_ms = await time(stream, true);
    const oneLine_ms = await time(oneLine, true);
    // Generous slack for a loaded machine; the quadratic reader took over 10× the plain time.
    assert.ok(stream_ms < plain_ms * 5 + 1500, `stream ${stream_ms.toFixed(0)} ms vs plain ${plain_ms.toFixed(0)} ms`);
    assert.ok(oneLine_ms < plain_ms * 5 + 1500, `one-line stream ${oneLine_ms.toFixed(0)} ms vs plain ${plain_ms.toFixed(0)} ms`);
  });
});
