import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { AnswerRequest } from '../../src/core/types.js';
import { downloadVerified } from '../../src/targets/llamacpp/download.js';
import { createOllamaTarget } from '../../src/targets/ollama/target.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { startForwardProxy, type ForwardProxy } from '../helpers/forward-proxy.js';
import { hasBwrap } from '../helpers/bwrap.js';
import { hasOpenssl, testCertificate } from '../helpers/test-cert.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'jb-proxy-'));
const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
const saved = Object.fromEntries(PROXY_VARS.map((k) => [k, process.env[k]]));
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers) await c();
  for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
  else process.env[k] = v;
  rmSync(dir, { recursive: true, force: true });
});

const req: AnswerRequest = { prompt: 'Which letter?', case: { id: 'q1', prompt: 'Which letter?', expected: 'B', dataset: 'd', weight: 1, tags: [] } };
const KEY = 'sk-proxy-test-0123456789';

/** Sets the proxy variables for the targets made next (each reads them when it is made); the rest are unset. */
function proxyEnv(vars: Record<string, string>): void {
  for (const k of PROXY_VARS) delete process.env[k];
  Object.assign(process.env, vars);
}


/** Runs `script` (TypeScript, importing from src/) in a child Node with only the proxy variables in `env` set, optionally inside bwrap with extra arguments. */
function child(script: string, env: Record<string, string>, bwrap: string[] | null = null): Promise<{ code: number | null; out: string; err: string }> {
  const file = join(dir, `child-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(file, script);
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const k of PROXY_VARS) delete childEnv[k];
  Object.assign(childEnv, env);
  const node = [process.execPath, '--import', 'tsx', file];
  const [cmd, ...args] = bwrap === null ? node : ['bwrap', '--dev-bind', '/', '/', ...bwrap, '--', ...node];
  return new Promise((ok, fail) => {
    const c = spawn(cmd!, args, { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (err += d));
    c.on('error', fail);
    c.on('close', (code) => ok({ code, out, err }));
  });
}

async function started<T extends { close(): Promise<void> }>(p: Promise<T>): Promise<T> {
  const s = await p;
  closers.push(() => s.close());
  return s;
}

describe('proxies from the environment', () => {
  test('HTTP_PROXY: plain and streamed requests go through the proxy in absolute form; the stream is still timed as it arrives', async () => {
    const proxy: ForwardProxy = await started(startForwardProxy());
    const server: FakeServer = await started(
      startFakeOpenAI((r) => (r.body.stream ? { kind: 'stream', text: 'The answer is B.', usage: { prompt_tokens: 3, completion_tokens: 5 }, chunkDelay_ms: 40 } : { kind: 'plain', text: 'B' })),
    );
    proxyEnv({ HTTP_PROXY: proxy.url });
    const plain = new OpenAITarget({ endpoint: server.url, model: 'm', apiKey: KEY, stream: false });
    const streamed = new OpenAITarget({ endpoint: server.url, model: 'm', apiKey: KEY, stream: true });
    try {
      assert.equal((await plain.answer(req)).text, 'B');
      const a = await streamed.answer(req);
      assert.equal(a.text, 'The answer is B.');
      const e2e = (a.meta as { e2e_ms: number }).e2e_ms;
      assert.ok(typeof a.ttft_ms === 'number' && e2e - a.ttft_ms >= 100, `TTFT ${a.ttft_ms} ms, e2e ${e2e} ms: the first token is timed when it arrives, not at the end`);
    } finally {
      await plain.close();
      await streamed.close();
    }
    const target = `${server.url}/chat/completions`;
    assert.deepEqual(proxy.seen, [`POST ${target}`, `POST ${target}`]);
    assert.equal(proxy.authorizations[0], `Bearer ${KEY}`, 'a plain-http request carries its headers to the proxy, as any HTTP proxy sees them');
    assert.equal(server.seen.length, 2);
  });

  test('NO_PROXY: a listed host (or its domain) goes direct; an unlisted one still goes through the proxy', async () => {
    const proxy = await started(startForwardProxy());
    const server = await started(startFakeOpenAI(() => ({ kind: 'plain', text: 'B' })));
    for (const [noProxy, via] of [
      ['127.0.0.1', false],
      ['example.com, 127.0.0.1', false],
      ['example.com', true],
    ] as const) {
      proxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: noProxy });
      const before = proxy.seen.length;
      const t = new OpenAITarget({ endpoint: server.url, model: 'm', stream: false });
      try {
        assert.equal((await t.answer(req)).text, 'B');
      } finally {
        await t.close();
      }
      assert.equal(proxy.seen.length - before, via ? 1 : 0, `NO_PROXY=${noProxy}`);
    }
    assert.equal(server.seen.length, 3);
  });

  test('the ollama target goes through HTTP_PROXY too, and NO_PROXY bypasses it', async () => {
    const proxy = await started(startForwardProxy());
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e9 } }, decode_tok_s: () => 40 });
    const url = await fake.start();
    closers.push(async () => fake.stop());
    for (const [noProxy, via] of [
      ['', true],
      ['127.0.0.1', false],
    ] as const) {
      proxyEnv({ HTTP_PROXY: proxy.url, NO_PROXY: noProxy });
      const before = proxy.seen.length;
      const t = createOllamaTarget({ model: 'm1', base_url: url, num_predict: 2 });
      assert.ok((await t.answer(req)).text.length > 0);
      await t.close?.();
      const asked = proxy.seen.slice(before);
      if (via) assert.ok(asked.length > 0 && asked.every((l) => l.includes(` ${url}/api/`)), asked.join('; '));
      else assert.deepEqual(asked, [], `NO_PROXY=${noProxy}`);
    }
  });

  test('joulebench fetch model downloads through HTTP_PROXY, redirects included', async () => {
    const proxy = await started(startForwardProxy());
    const bytes = Buffer.from('GGUF not really, but hashed all the same');
    const server = http.createServer((r, res) => {
      if (r.url === '/hop') res.writeHead(302, { location: '/model.gguf' }).end();
      else res.writeHead(200, { 'content-length': bytes.length }).end(bytes);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    closers.push(() => new Promise<void>((ok) => server.close(() => ok())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    proxyEnv({ HTTP_PROXY: proxy.url });
    const dest = join(dir, 'model.gguf');
    const r = await downloadVerified({ url: `${base}/hop`, sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length, dest });
    assert.equal(r.bytes, bytes.length);
    assert.deepEqual(readFileSync(dest), bytes);
    assert.deepEqual(proxy.seen, [`GET ${base}/hop`, `GET ${base}/model.gguf`]);
  });

  test('a redirect through the proxy is still refused, not followed', async () => {
    const proxy = await started(startForwardProxy());
    const elsewhere = await started(startFakeOpenAI(() => ({ kind: 'plain', text: 'should not be asked' })));
    const server = await started(startFakeOpenAI(() => ({ kind: 'status', status: 302, headers: { location: `${elsewhere.url}/chat/completions` } })));
    proxyEnv({ HTTP_PROXY: proxy.url });
    const t = new OpenAITarget({ endpoint: server.url, model: 'm', apiKey: KEY, stream: false });
    try {
      await assert.rejects(t.answer(req), (e: { code?: string }) => e.code === 'E_REDIRECT');
    } finally {
      await t.close();
    }
    assert.equal(proxy.seen.length, 1);
    assert.equal(elsewhere.seen.length, 0);
  });

  // /etc/hosts is replaced inside a bubblewrap mount namespace (as in openai-http-client.test.ts), so
  // this machine's resolver maps the names to metadata addresses; the proxy (outside) never resolves them.
  test('through a proxy, a host name this machine resolves to a metadata address is still refused, and the proxy is never asked', { skip: hasBwrap() ? false : 'bwrap is not usable here (scripts/ensure-test-deps.sh installs bubblewrap)' }, async () => {
    const proxy = await started(startForwardProxy());
    const hosts = join(dir, 'hosts');
    writeFileSync(hosts, ['127.0.0.1 localhost', '169.254.169.254 metadata.jb.test', '127.0.0.1 mixed.jb.test', '169.254.169.254 mixed.jb.test', ''].join('\n'));
    const script = `
import { OpenAITarget } from ${JSON.stringify(new URL('../../src/targets/openai/target.ts', import.meta.url).href)};
const out = [];
for (const endpoint of ['http://metadata.jb.test:9/v1', 'http://mixed.jb.test:9/v1', 'http://unresolvable.jb.test:9/v1']) {
  const t = new OpenAITarget({ endpoint, model: 'm', apiKey: ${JSON.stringify(KEY)}, stream: false });
  try { out.push((await t.answer({ prompt: 'q', case: { id: 'c', prompt: 'q', expected: null, dataset: 'd', weight: 1, tags: [] } })).text); }
  catch (e) { out.push(e.code); }
  await t.close();
}
console.log(JSON.stringify(out));
`;
    const r = await child(script, { HTTP_PROXY: proxy.url }, ['--ro-bind', hosts, '/etc/hosts']);
    assert.equal(r.code, 0, r.err);
    // A name this machine cannot resolve is left to the proxy (which cannot resolve it either: 502).
    assert.deepEqual(JSON.parse(r.out), ['E_FORBIDDEN_ADDRESS', 'E_FORBIDDEN_ADDRESS', 'E_HTTP']);
    assert.deepEqual(proxy.seen, ['POST http://unresolvable.jb.test:9/v1/chat/completions']);
  });

  test('HTTPS_PROXY: an https endpoint goes through a CONNECT tunnel (the key only inside it, the certificate still verified); NO_PROXY bypasses it', { skip: hasOpenssl ? false : 'no openssl CLI to make a test certificate' }, async () => {
    const { key, cert } = testCertificate(dir);
    const auth: (string | undefined)[] = [];
    const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (r, res) => {
      auth.push(r.headers.authorization);
      r.resume();
      r.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { content: 'B' } }] })));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    closers.push(
      () =>
        new Promise<void>((ok) => {
          server.closeAllConnections();
          server.close(() => ok());
        }),
    );
    const proxy = await started(startForwardProxy());
    const port = (server.address() as AddressInfo).port;
    // NODE_EXTRA_CA_CERTS is read at start-up: a child trusts the test certificate.
    const script = `
import { OpenAITarget } from ${JSON.stringify(new URL('../../src/targets/openai/target.ts', import.meta.url).href)};
const out = [];
for (const noProxy of ['', 'localhost']) {
  process.env.NO_PROXY = noProxy;
  const t = new OpenAITarget({ endpoint: 'https://localhost:${port}/v1', model: 'm', apiKey: ${JSON.stringify(KEY)}, stream: false });
  try { out.push((await t.answer({ prompt: 'q', case: { id: 'c', prompt: 'q', expected: null, dataset: 'd', weight: 1, tags: [] } })).text); }
  catch (e) { out.push(e.code + ': ' + e.message); }
  await t.close();
}
console.log(JSON.stringify(out));
`;
    const r = await child(script, { NODE_EXTRA_CA_CERTS: cert, HTTPS_PROXY: proxy.url });
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), ['B', 'B']);
    assert.deepEqual(proxy.seen, [`CONNECT localhost:${port}`], 'the first through the tunnel, the second (NO_PROXY=localhost) direct');
    assert.deepEqual(auth, [`Bearer ${KEY}`, `Bearer ${KEY}`]);
  });
});
