import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AttemptFailure, HttpPool, postChat, type ChatResult } from '../../src/targets/openai/http.js';
import { hasBwrap } from '../helpers/bwrap.js';
import { hasOpenssl, testCertificate } from '../helpers/test-cert.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'jb-http-'));
const closers: (() => void)[] = [];
after(() => {
  for (const c of closers) c();
  rmSync(dir, { recursive: true, force: true });
});

const PLAIN = JSON.stringify({ choices: [{ message: { content: 'B' } }], usage: { prompt_tokens: 3, completion_tokens: 1 } });
const sse = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;

interface Seen {
  head: string;
  body: string;
  conn: number;
}

/**
 * A TCP server that reads each request (head + Content-Length body) and lets `answer` write whatever
 * bytes it likes to the socket: replies no `http.Server` would send. Records every request and the
 * connection it came on.
 */
async function wireServer(answer: (s: net.Socket, req: Seen, n: number) => void): Promise<{ url: URL; seen: Seen[]; connections: () => number; open: () => number }> {
  const seen: Seen[] = [];
  let conns = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    const conn = ++conns;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    let buf = Buffer.alloc(0);
    s.on('error', () => {});
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const len = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const req = { head, body: buf.toString('utf8', end + 4, end + 4 + len), conn };
        buf = buf.subarray(end + 4 + len);
        seen.push(req);
        answer(s, req, seen.length - 1);
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  closers.push(() => {
    server.close();
    for (const s of sockets) s.destroy();
  });
  const port = (server.address() as net.AddressInfo).port;
  return { url: new URL(`http://127.0.0.1:${port}/v1/chat/completions`), seen, connections: () => conns, open: () => sockets.size };
}

/** Waits until `f()` holds (connections close asynchronously), up to 5 s. */
async function until(f: () => boolean): Promise<boolean> {
  for (const t0 = performance.now(); !f() && performance.now() - t0 < 5000; ) await new Promise((ok) => setTimeout(ok, 5));
  return f();
}

const reply = (body: string, extra = '') => `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

async function failure(p: Promise<unknown>): Promise<AttemptFailure> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AttemptFailure, String(e));
    return e;
  }
  assert.fail('expected the request to fail');
}

/** A pool closed when the file's tests end. */
function newPool(): HttpPool {
  const pool = new HttpPool();
  closers.push(() => pool.destroy());
  return pool;
}

function ask(url: URL, pool = newPool(), extra: Partial<Parameters<typeof postChat>[0]> = {}): Promise<ChatResult> {
  return postChat({ url, body: { model: 'm', messages: [] }, stream: false, timeout_ms: 5000, pool, ...extra });
}

describe('HTTP client: connections', () => {
  test('keep-alive: sequential requests share one connection; concurrent ones open more; the request head is what Node sent', async () => {
    const s = await wireServer((sock) => sock.write(reply(PLAIN)));
    const pool = newPool();
    for (let i = 0; i < 3; i++) assert.equal((await ask(s.url, pool, { apiKey: 'k-1' })).text, 'B');
    assert.equal(s.connections(), 1);
    await Promise.all([ask(s.url, pool), ask(s.url, pool), ask(s.url, pool)]);
    assert.equal(s.connections(), 3, 'two more for the concurrent ones, the idle one reused');
    const [start, ...fields] = s.seen[0]!.head.split('\r\n');
    assert.equal(start, 'POST /v1/chat/completions HTTP/1.1');
    // Field names are case-insensitive (RFC 9110 §5.1).
    const head = fields.map((f) => f.replace(/^[^:]+/, (n) => n.toLowerCase()));
    assert.ok(head.includes(`host: 127.0.0.1:${s.url.port}`));
    assert.ok(head.includes('authorization: Bearer k-1'));
    assert.ok(head.includes('content-type: application/json'));
    assert.ok(head.includes('accept: application/json'));
    assert.ok(head.includes(`content-length: ${Buffer.byteLength(s.seen[0]!.body)}`));
    assert.deepEqual(JSON.parse(s.seen[0]!.body), { model: 'm', messages: [] });
  });

  test('Connection: close, extra bytes after a reply, and a server closing an idle connection: a fresh connection each time, no error', async () => {
    const s = await wireServer((sock, _r, n) => {
      if (n === 0) sock.end(reply(PLAIN, 'Connection: close\r\n'));
      else if (n === 1) sock.write(`${reply(PLAIN)}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno`);
      else if (n === 2) {
        sock.write(reply(PLAIN));
        setTimeout(() => sock.end(), 20); // the server's keep-alive timeout, while the connection idles
      } else sock.write(reply(PLAIN));
    });
    const pool = newPool();
    for (let i = 0; i < 3; i++) assert.equal((await ask(s.url, pool)).text, 'B');
    await new Promise((ok) => setTimeout(ok, 100));
    assert.equal((await ask(s.url, pool)).text, 'B');
    assert.equal(s.connections(), 4);
  });

  test('a reply cut short, a reset before any byte, and a refused port are connection failures', async () => {
    const s = await wireServer((sock, _r, n) => {
      if (n === 0) sock.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"choices"');
      else sock.destroy();
    });
    const cut = await failure(ask(s.url));
    assert.equal(cut.kind, 'connection');
    assert.match(cut.message, /reset while reading the reply/);
    const reset = await failure(ask(s.url));
    assert.equal(reset.kind, 'connection');
    assert.match(reset.message, /closed the connection before replying/);
    const closed = net.createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const refused = await failure(ask(new URL(`http://127.0.0.1:${port}/v1/chat/completions`)));
    assert.equal(refused.kind, 'connection');
    assert.match(refused.message, /ECONNREFUSED/);
  });

  test('closing the pool fails a request in flight at once (no wait for its timeout)', async () => {
    const s = await wireServer(() => {}); // never answers
    const pool = newPool();
    const t0 = performance.now();
    const pending = failure(ask(s.url, pool, { timeout_ms: 60_000 }));
    while (s.seen.length === 0) await new Promise((ok) => setTimeout(ok, 5));
    pool.destroy();
    const e = await pending;
    assert.equal(e.kind, 'connection');
    assert.ok(performance.now() - t0 < 10_000);
    assert.ok(await until(() => s.open() === 0), 'its connection is closed');
  });

  test('a malformed reply (both framings) is malformed, and its connection is never reused', async () => {
    const s = await wireServer((sock, _r, n) =>
      sock.write(n === 0 ? `HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n` : reply(PLAIN)),
    );
    const pool = newPool();
    const e = await failure(ask(s.url, pool));
    assert.equal(e.kind, 'malformed');
    assert.match(e.message, /not valid HTTP\/1\.1/);
    assert.equal((await ask(s.url, pool)).text, 'B');
    assert.equal(s.connections(), 2);
  });

  test('103 Early Hints before the reply are skipped; chunked and close-framed bodies are read', async () => {
    const body = PLAIN;
    const s = await wireServer((sock, _r, n) => {
      if (n === 0) sock.write(`HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n${reply(body)}`);
      else if (n === 1) sock.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`);
      else sock.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n${body}`);
    });
    for (let i = 0; i < 3; i++) assert.equal((await ask(s.url)).text, 'B');
  });

  test('an API key with CR/LF (header injection) is refused and nothing is sent', async () => {
    const s = await wireServer((sock) => sock.write(reply(PLAIN)));
    const e = await failure(ask(s.url, newPool(), { apiKey: 'k\r\nX-Injected: 1' }));
    assert.equal(e.kind, 'malformed');
    assert.match(e.message, /not allowed in an HTTP header/);
    assert.equal(e.message.includes('X-Injected'), false, 'the key is not echoed');
    await new Promise((ok) => setTimeout(ok, 50));
    assert.equal(s.seen.length, 0);
  });
});

describe('HTTP client: limits and timing', () => {
  test('one per-attempt timeout covers a head that never ends and a body that stalls', async () => {
    const s = await wireServer((sock, _r, n) => sock.write(n === 0 ? 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n' : 'HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"cho'));
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      const e = await failure(ask(s.url, newPool(), { timeout_ms: 150 }));
      assert.equal(e.kind, 'timeout');
      assert.ok(performance.now() - t0 >= 140);
    }
  });

  test('requests with different limits on one pool each time out at their own limit; a limit past setTimeout\'s range is kept, not cut to 1 ms', async () => {
    // Replies held for 400 ms; one timer watches every request of a pool.
    const s = await wireServer((sock) => setTimeout(() => sock.write(reply(PLAIN)), 400));
    const pool = newPool();
    const t0 = performance.now();
    const when = (p: Promise<unknown>) => p.then(() => 'ok', (e: AttemptFailure) => e.kind).then((r) => [r, performance.now() - t0] as const);
    // The long limit first, then a shorter one: the timer is moved earlier for it.
    const [slow, fast, fastest, huge] = await Promise.all([
      when(ask(s.url, pool, { timeout_ms: 5000 })),
      when(ask(s.url, pool, { timeout_ms: 250 })),
      when(ask(s.url, pool, { timeout_ms: 100 })),
      // 2^31 ms and more: setTimeout would fire after 1 ms (with a warning); the old client timed out at once.
      when(ask(s.url, pool, { timeout_ms: 2 ** 31 + 1000 })),
    ]);
    assert.equal(slow[0], 'ok');
    assert.equal(huge[0], 'ok');
    assert.equal(fast[0], 'timeout');
    assert.equal(fastest[0], 'timeout');
    assert.ok(fastest[1] >= 95 && fast[1] >= 245, `timeouts at ${fastest[1]} and ${fast[1]} ms`);
    assert.ok(fastest[1] < fast[1], 'each at its own limit');
    assert.equal(pool.deadlines.size, 0, 'no request left watched');
    // Watched again after the timer has fired and rearmed: a timeout still fires.
    const late = await failure(ask(s.url, pool, { timeout_ms: 50 }));
    assert.equal(late.kind, 'timeout');
  });

  test('the pool\'s timer does not keep the process alive once no request is in flight', async () => {
    const script = `
import net from 'node:net';
import { HttpPool, postChat } from ${JSON.stringify(new URL('../../src/targets/openai/http.ts', import.meta.url).href)};
const server = net.createServer((s) => s.once('data', () => s.end('HTTP/1.1 200 OK\\r\\nContent-Length: ${PLAIN.length}\\r\\n\\r\\n${PLAIN.replace(/"/g, '\\"')}')));
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const pool = new HttpPool();
const r = await postChat({ url: new URL('http://127.0.0.1:' + server.address().port + '/v1/chat/completions'), body: {}, stream: false, timeout_ms: 600000, pool });
server.close();
console.log(r.text);
`;
    const t0 = performance.now();
    const r = await child(script);
    assert.equal(r.out.trim(), 'B', r.err);
    assert.equal(r.code, 0);
    assert.ok(performance.now() - t0 < 60_000, 'exited without waiting for the 600 s limit');
  });

  test('plain replies arriving in pieces on several connections at once are read whole (read memory is shared between connections)', async () => {
    const texts = Array.from({ length: 4 }, (_, i) => `answer ${i} ${'é'.repeat(300 + i)}`);
    const s = await wireServer((sock, req) => {
      const i = Number(/"i":(\d)/.exec(req.body)?.[1]);
      const wire = Buffer.from(reply(JSON.stringify({ choices: [{ message: { content: texts[i] } }] })));
      // Cut inside the head, inside a two-byte character and inside the body, with pauses so each piece is its own read.
      const cuts = [0, 20, 130, 131, 400, wire.length];
      cuts.slice(1).forEach((c, k) => setTimeout(() => sock.write(wire.subarray(cuts[k]!, c)), 15 * k + 5 * i));
    });
    const pool = newPool();
    const got = await Promise.all(texts.map((_, i) => ask(s.url, pool, { body: { i } })));
    assert.deepEqual(got.map((r) => r.text), texts);
    // An error body in pieces keeps its message.
    const e = await failure(
      postChat({ url: (await wireServer((sock) => { sock.write('HTTP/1.1 503 Busy\r\nContent-Length: 32\r\n\r\n{"error":{"mes'); setTimeout(() => sock.write('sage":"overload"}}'), 30); })).url, body: {}, stream: false, timeout_ms: 5000, pool }),
    );
    assert.equal(e.message, 'HTTP 503: overload');
  });

  test('an abort signal fails every request in flight under it at once, and only those; one listener a signal, not one a request', async () => {
    const s = await wireServer(() => {}); // never answers
    const pool = newPool();
    const a = new AbortController();
    const b = new AbortController();
    const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (e: AttemptFailure) => e.kind);
    const underA = Array.from({ length: 10 }, () => outcome(ask(s.url, pool, { signal: a.signal, timeout_ms: 20_000 })));
    const underB = Array.from({ length: 2 }, () => outcome(ask(s.url, pool, { signal: b.signal, timeout_ms: 20_000 })));
    await new Promise((ok) => setTimeout(ok, 100));
    assert.equal(getEventListeners(a.signal, 'abort').length, 1);
    assert.equal(getEventListeners(b.signal, 'abort').length, 1);
    const t0 = performance.now();
    a.abort();
    assert.deepEqual(await Promise.all(underA), Array(10).fill('aborted'));
    assert.ok(performance.now() - t0 < 5000);
    assert.ok(await until(() => s.open() === 2), `the aborted requests' connections are closed, the others stay (${s.open()} open)`);
    let bDone = false;
    void Promise.all(underB).then(() => (bDone = true));
    await new Promise((ok) => setTimeout(ok, 50));
    assert.equal(bDone, false, 'requests under another signal go on');
    b.abort();
    assert.deepEqual(await Promise.all(underB), ['aborted', 'aborted']);
    // Under a signal already aborted: refused at once, nothing sent.
    const seen = s.seen.length;
    assert.equal(await outcome(ask(s.url, pool, { signal: a.signal })), 'aborted');
    assert.equal(s.seen.length, seen);
    assert.equal(pool.deadlines.size, 0);
  });

  test('the reply cap cuts off a chunked body that never ends, and an error body', async () => {
    const s = await wireServer((sock, _r, n) => {
      const status = n === 0 ? '200 OK' : '500 Internal Server Error';
      sock.write(`HTTP/1.1 ${status}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const t = setInterval(() => (sock.destroyed ? clearInterval(t) : sock.write(`400\r\n${'x'.repeat(1024)}\r\n`)), 1);
    });
    const big = await failure(ask(s.url, newPool(), { max_reply_bytes: 20_000 }));
    assert.equal(big.kind, 'malformed');
    assert.match(big.message, /larger than 20000 bytes/);
    const err = await failure(ask(s.url, newPool(), { max_reply_bytes: 20_000 }));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 500);
    assert.match(err.message, /^HTTP 500: x+$/);
  });

  test('TTFT is taken when the first content bytes arrive, not at the end of the reply', async () => {
    const s = await wireServer((sock) => {
      sock.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = (t: string) => `${Buffer.byteLength(t).toString(16)}\r\n${t}\r\n`;
      sock.write(chunk(sse({ choices: [{ delta: { content: 'Hel' } }] })));
      setTimeout(() => sock.write(chunk(sse({ choices: [{ delta: { content: 'lo' }, finish_reason: 'stop' }] }) + 'data: [DONE]\n\n') + '0\r\n\r\n'), 300);
    });
    const r = await postChat({ url: s.url, body: {}, stream: true, timeout_ms: 5000, pool: newPool() });
    assert.equal(r.text, 'Hello');
    assert.ok(r.ttft_ms !== null && r.e2e_ms - r.ttft_ms >= 250, `TTFT ${r.ttft_ms} ms, e2e ${r.e2e_ms} ms`);
  });

  test('a stream cut before [DONE] or finish_reason is an error, never a shorter answer', async () => {
    const s = await wireServer((sock) =>
      sock.write(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: ${sse({ choices: [{ delta: { content: 'Par' } }] }).length}\r\n\r\n${sse({ choices: [{ delta: { content: 'Par' } }] })}`),
    );
    const e = await failure(postChat({ url: s.url, body: {}, stream: true, timeout_ms: 5000, pool: newPool() }));
    assert.equal(e.kind, 'malformed');
    assert.match(e.message, /truncated/);
  });
});

/** Runs `script` (TypeScript, importing from src/) in a child Node with `env`, optionally inside bwrap with extra arguments; returns its stdout. */
function child(script: string, env: Record<string, string> = {}, bwrap: string[] | null = null): Promise<{ code: number | null; out: string; err: string }> {
  const file = join(dir, `child-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(file, script);
  const node = [process.execPath, '--import', 'tsx', file];
  const [cmd, ...args] = bwrap === null ? node : ['bwrap', '--dev-bind', '/', '/', ...bwrap, '--', ...node];
  return new Promise((ok, fail) => {
    const c = spawn(cmd!, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (err += d));
    c.on('error', fail);
    c.on('close', (code) => ok({ code, out, err }));
  });
}

const ASK_EACH = (urls: string[]) => `
import { OpenAITarget } from ${JSON.stringify(new URL('../../src/targets/openai/target.ts', import.meta.url).href)};
const out = [];
for (const endpoint of ${JSON.stringify(urls)}) {
  const t = new OpenAITarget({ endpoint, model: 'm', apiKey: 'sk-guard-test-secret', stream: false });
  try { out.push((await t.answer({ prompt: 'q', case: { id: 'c', prompt: 'q', expected: null, dataset: 'd', weight: 1, tags: [] } })).text); }
  catch (e) { out.push(e.code); }
  await t.close();
}
console.log(JSON.stringify(out));
`;


describe('HTTP client: the metadata-address guard through DNS', () => {
  // /etc/hosts is replaced inside a bubblewrap mount namespace, so real getaddrinfo resolves these
  // names to metadata addresses: the attack is a DNS name, not an IP literal (which the config refuses).
  test('a host name resolving to 169.254.169.254, fd00:ec2::254 or to both a good and a metadata address is refused; the key never leaves', { skip: hasBwrap() ? false : 'bwrap is not usable here (scripts/ensure-test-deps.sh installs bubblewrap)' }, async () => {
    const s = await wireServer((sock) => sock.write(reply(PLAIN)));
    const hosts = join(dir, 'hosts');
    writeFileSync(hosts, ['127.0.0.1 localhost', '::1 localhost', '169.254.169.254 metadata.jb.test', 'fd00:ec2::254 meta6.jb.test', '127.0.0.1 mixed.jb.test', '169.254.169.254 mixed.jb.test', '127.0.0.1 fine.jb.test', ''].join('\n'));
    const port = s.url.port;
    const urls = ['metadata', 'meta6', 'mixed', 'fine'].map((h) => `http://${h}.jb.test:${port}/v1`);
    const r = await child(ASK_EACH(urls), {}, ['--ro-bind', hosts, '/etc/hosts']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), ['E_FORBIDDEN_ADDRESS', 'E_FORBIDDEN_ADDRESS', 'E_FORBIDDEN_ADDRESS', 'B']);
    assert.equal(s.seen.length, 1, 'only the allowed name reached a server');
  });
});

describe('HTTP client: TLS', () => {
  test('verifies the certificate (an untrusted one is refused); trusts NODE_EXTRA_CA_CERTS as node:https does', { skip: hasOpenssl ? false : 'no openssl CLI to make a test certificate' }, async () => {
    const { key, cert } = testCertificate(dir);
    const server = https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(PLAIN));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    closers.push(() => {
      server.closeAllConnections();
      server.close();
    });
    const port = (server.address() as net.AddressInfo).port;
    const untrusted = await failure(ask(new URL(`https://127.0.0.1:${port}/v1/chat/completions`)));
    assert.equal(untrusted.kind, 'connection');
    assert.match(untrusted.message, /SELF_SIGNED|CERT|UNABLE/i);
    const r = await child(ASK_EACH([`https://localhost:${port}/v1`, `https://127.0.0.1:${port}/v1`]), { NODE_EXTRA_CA_CERTS: cert });
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), ['B', 'B']);
  });
});
