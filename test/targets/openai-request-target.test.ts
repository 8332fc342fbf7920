import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { AnswerRequest, Case, ChatMessage } from '../../src/core/types.js';
import { HttpPool, postChat } from '../../src/targets/openai/http.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';

const CASE: Case = { id: 'c', dataset: 'd', prompt: 'p', expected: 'x', weight: 1, tags: [] };
const REPLY = JSON.stringify({ choices: [{ message: { content: 'ok' } }], usage: { prompt_tokens: 1, completion_tokens: 1 } });

/** A server on `host` that records each request's path and Host header. */
async function recordingServer(host: string): Promise<{ port: number; seen: { url: string; host: string }[]; close: () => Promise<void> }> {
  const seen: { url: string; host: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', host: req.headers.host ?? '' });
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(REPLY));
  });
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, host, ok));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections(); // the client's keep-alive sockets
      }),
  };
}

// The client works out the request options once per URL object (instead of Node converting the URL on
// every request): the path keeps its query, the Host header its port, an IPv6 literal its address, and a
// URL changed after the first request is followed.
test('postChat: path with query, Host, IPv6 literal, and a URL object changed between requests', async (t) => {
  const s = await recordingServer('127.0.0.1');
  t.after(() => s.close());
  const url = new URL(`http://127.0.0.1:${s.port}/v1/chat/completions?api-version=2024-06-01`);
  const pool = new HttpPool();
  t.after(() => pool.destroy());
  const ask = () => postChat({ url, body: { model: 'm', messages: [] }, stream: false, timeout_ms: 5000, pool });
  assert.equal((await ask()).text, 'ok');
  url.search = '?api-version=2025-01-01';
  assert.equal((await ask()).text, 'ok');
  assert.deepEqual(s.seen, [
    { url: '/v1/chat/completions?api-version=2024-06-01', host: `127.0.0.1:${s.port}` },
    { url: '/v1/chat/completions?api-version=2025-01-01', host: `127.0.0.1:${s.port}` },
  ]);

  let v6;
  try {
    v6 = await recordingServer('::1');
  } catch {
    t.diagnostic('no IPv6 loopback here: the IPv6 literal case is not exercised');
    return;
  }
  t.after(() => v6.close());
  const url6 = new URL(`http://[::1]:${v6.port}/v1/chat/completions`);
  const pool6 = new HttpPool();
  t.after(() => pool6.destroy());
  assert.equal((await postChat({ url: url6, body: {}, stream: false, timeout_ms: 5000, pool: pool6 })).text, 'ok');
  assert.deepEqual(v6.seen, [{ url: '/v1/chat/completions', host: `[::1]:${v6.port}` }]);
});

// The target serializes the body around the messages once and splices each case in: the bytes sent
// must be JSON.stringify of the body object, key for key, whatever the prompt, messages, model or limit.
test('openai target: the request body is JSON.stringify of {model, messages, temperature, max_tokens[, stream, stream_options]}, byte for byte', async (t) => {
  const server = await startFakeOpenAI((req) => (req.body.stream === true ? { kind: 'stream', text: 'ok' } : { kind: 'plain', text: 'ok' }));
  t.after(() => server.close());
  const base = server.url;
  const rawOf = (n: number): string => server.seen[n]!.raw;
  const prompts = ['plain', '', 'quote " backslash \\ slash / </script>', 'ctl \u0000\u0001\b\f\n\r\t\u001f\u007f', 'unicode é 漢字 😀 \u2028\u2029', 'lone \ud800 surrogate \udfff', 'x'.repeat(5000)];
  const conversation: ChatMessage[] = [
    { role: 'user', content: 'first "q"' },
    { role: 'assistant', content: 'a\nb' },
    { role: 'user', content: 'then \ud83d' },
  ];
  for (const [model, max_tokens] of [['m', 4], ['org/"odd" model\u00e9', 1], ['m', 256]] as [string, number][]) {
    for (const stream of [false, true]) {
      const target = new OpenAITarget({ endpoint: base, model, max_tokens, stream });
      const cases: AnswerRequest[] = [...prompts.map((prompt) => ({ prompt, case: CASE })), { prompt: 'then', case: CASE, messages: conversation }];
      for (const req of cases) {
        const n = server.seen.length;
        assert.equal((await target.answer(req)).text, 'ok');
        const body: Record<string, unknown> = { model, messages: req.messages ?? [{ role: 'user', content: req.prompt }], temperature: 0, max_tokens };
        if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
        assert.equal(rawOf(n), JSON.stringify(body), `model ${model}, stream ${stream}, prompt ${JSON.stringify(req.prompt).slice(0, 40)}`);
      }
      // A prepared request (load runs) sends the same bytes.
      const n = server.seen.length;
      await target.prepare({ prompt: prompts[2]!, case: CASE })();
      assert.equal(JSON.parse(rawOf(n)).messages[0].content, prompts[2]);
      await target.close();
    }
  }
});
