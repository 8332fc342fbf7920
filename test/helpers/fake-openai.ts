import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake server saw. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The body's text as it arrived (for byte-for-byte checks of what a target sends). */
  raw: string;
}

/** How the fake server answers one request. */
export type Reply =
  | { kind: 'stream'; text: string; usage?: { prompt_tokens: number; completion_tokens: number; [detail: string]: unknown }; chunkDelay_ms?: number }
  | { kind: 'plain'; text: string; usage?: { prompt_tokens: number; completion_tokens: number; [detail: string]: unknown } }
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'raw'; status: number; contentType: string; body: string };

export interface FakeServer {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 (port 0) speaking enough of /chat/completions for tests. `reply`
 * chooses the answer from the request and its 0-based number; streams follow the OpenAI SSE shape.
 */
export async function startFakeOpenAI(reply: (req: SeenRequest, n: number) => Reply): Promise<FakeServer> {
  const seen: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw || '{}');
      } catch {
        body = { _unparsed: raw };
      }
      const s: SeenRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, raw };
      seen.push(s);
      void answer(reply(s, seen.length - 1), res, body);
    });
  });
  return { seen, ...(await listenOnLoopback(server)) };
}

async function answer(r: Reply, res: http.ServerResponse, body: Record<string, unknown>): Promise<void> {
  const model = String(body.model ?? 'm');
  switch (r.kind) {
    case 'hang':
      return;
    case 'reset':
      res.socket?.destroy();
      return;
    case 'status':
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body ?? JSON.stringify({ error: { message: `status ${r.status}` } }));
      return;
    case 'raw':
      res.writeHead(r.status, { 'content-type': r.contentType });
      res.end(r.body);
      return;
    case 'plain':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model, choices: [{ index: 0, message: { role: 'assistant', content: r.text }, finish_reason: 'stop' }], ...(r.usage ? { usage: r.usage } : {}) }));
      return;
    case 'stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const pieces = r.text.match(/.{1,3}/gs) ?? [];
      for (const p of pieces) {
        res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { content: p } }] })}\n\n`);
        if (r.chunkDelay_ms) await new Promise((ok) => setTimeout(ok, r.chunkDelay_ms));
      }
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
      if (r.usage && includeUsage) res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model, choices: [], usage: r.usage })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
  }
}

/**
 * Listens on 127.0.0.1 (a free port) and returns the `/v1` base URL and a close that also destroys
 * open keep-alive sockets (so a test never waits for them to time out).
 */
export async function listenOnLoopback(server: http.Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (sock) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
