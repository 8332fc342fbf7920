import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createPool, postChat } from '../../src/targets/openai/http.js';

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
  const pool = createPool();
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
  const pool6 = createPool();
  t.after(() => pool6.destroy());
  assert.equal((await postChat({ url: url6, body: {}, stream: false, timeout_ms: 5000, pool: pool6 })).text, 'ok');
  assert.deepEqual(v6.seen, [{ url: '/v1/chat/completions', host: `[::1]:${v6.port}` }]);
});
