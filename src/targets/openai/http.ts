import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { FailureKind } from '../retry.js';
import { guardedLookup } from './guard.js';

/** One failed attempt: what kind, the HTTP status if any, a one-line message (not yet redacted). */
export class AttemptFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** What one successful chat-completions call gave back. */
export interface ChatResult {
  text: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** Request sent to first content token, ms; `null` for a plain (non-streamed) reply. */
  ttft_ms: number | null;
  /** Request sent to last byte, ms. */
  e2e_ms: number;
  streamed: boolean;
}

export interface PostOptions {
  url: URL;
  body: Record<string, unknown>;
  stream: boolean;
  apiKey?: string;
  timeout_ms: number;
  agent: http.Agent;
  signal?: AbortSignal;
}

/** Keep-alive agents sized for concurrency; one per target. */
export function createAgent(url: URL): http.Agent {
  const opts = { keepAlive: true, maxSockets: Infinity, lookup: guardedLookup } as http.AgentOptions;
  return url.protocol === 'https:' ? new https.Agent(opts) : new http.Agent(opts);
}

/**
 * POSTs one chat-completions request with node:http (no redirects are followed: a 3xx is a failure).
 * Streams (SSE) when asked, timing the first content token; a server that answers a stream request
 * with plain JSON is read as plain. Throws AttemptFailure for every failure.
 */
export function postChat(o: PostOptions): Promise<ChatResult> {
  const payload = JSON.stringify(o.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: o.stream ? 'text/event-stream' : 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
  };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  const mod = o.url.protocol === 'https:' ? https : http;

  return new Promise<ChatResult>((resolve, reject) => {
    let settled = false;
    const finish = (err: AttemptFailure | null, value?: ChatResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const req = mod.request(o.url, { method: 'POST', headers, agent: o.agent, lookup: guardedLookup } as http.RequestOptions);
    const timer = setTimeout(() => finish(new AttemptFailure('timeout', `no complete reply within ${o.timeout_ms} ms`)), o.timeout_ms);
    const onAbort = (): void => finish(new AttemptFailure('aborted', 'aborted'));
    if (o.signal?.aborted) return onAbort();
    o.signal?.addEventListener('abort', onAbort, { once: true });

    let t0 = 0;
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'E_FORBIDDEN_ADDRESS') return finish(new AttemptFailure('forbidden', e.message));
      finish(new AttemptFailure('connection', `connection failed: ${e.code ?? e.message}`));
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const type = String(res.headers['content-type'] ?? '');
      res.setEncoding('utf8');
      res.on('error', (e: NodeJS.ErrnoException) => finish(new AttemptFailure('connection', `connection failed: ${e.code ?? e.message}`)));
      res.on('aborted', () => finish(new AttemptFailure('connection', 'connection reset while reading the reply')));
      if (status >= 300 && status < 400) {
        res.resume();
        return finish(new AttemptFailure('redirect', `HTTP ${status} redirect not followed${res.headers.location ? ` (to ${res.headers.location})` : ''}`, status));
      }
      if (status < 200 || status >= 300) {
        let body = '';
        res.on('data', (d: string) => {
          if (body.length < 4096) body += d;
        });
        // Retry-After is not read: seed 003 fixes the schedule (base × 2^(n−1), capped), so runs stay comparable.
        res.on('end', () => finish(new AttemptFailure('http', `HTTP ${status}: ${errorText(body)}`, status)));
        return;
      }
      if (o.stream && /text\/event-stream/i.test(type)) readStream(res, t0, finish);
      else readPlain(res, t0, finish);
    });
    req.end(payload);
    t0 = performance.now();
  });
}

type Finish = (err: AttemptFailure | null, value?: ChatResult) => void;

function readPlain(res: http.IncomingMessage, t0: number, finish: Finish): void {
  let body = '';
  res.on('data', (d: string) => (body += d));
  res.on('end', () => {
    const e2e_ms = performance.now() - t0;
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return finish(new AttemptFailure('malformed', `reply is not valid JSON (${body.length} bytes)`));
    }
    const j = json as { choices?: { message?: { content?: unknown } }[]; usage?: unknown };
    const content = j?.choices?.[0]?.message?.content;
    if (typeof content !== 'string') return finish(new AttemptFailure('malformed', 'reply has no choices[0].message.content'));
    const u = usageOf(j.usage);
    finish(null, { text: content, ...u, ttft_ms: null, e2e_ms, streamed: false });
  });
}

function readStream(res: http.IncomingMessage, t0: number, finish: Finish): void {
  let buf = '';
  let text = '';
  let ttft_ms: number | null = null;
  let usage = { prompt_tokens: null as number | null, completion_tokens: null as number | null };
  let done = false;
  let bad: string | null = null;
  const onLine = (line: string): void => {
    if (done || bad !== null || !line.startsWith('data:')) return;
    const data = line.slice(5).trim();
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let chunk: { choices?: { delta?: { content?: unknown } }[]; usage?: unknown; error?: { message?: unknown } };
    try {
      chunk = JSON.parse(data);
    } catch {
      bad = `stream chunk is not valid JSON (${data.length} bytes)`;
      return;
    }
    if (chunk?.error) {
      bad = `stream error: ${String(chunk.error.message ?? 'unknown')}`;
      return;
    }
    const piece = chunk?.choices?.[0]?.delta?.content;
    if (typeof piece === 'string' && piece.length > 0) {
      if (ttft_ms === null) ttft_ms = performance.now() - t0;
      text += piece;
    }
    if (chunk?.usage) usage = usageOf(chunk.usage);
  };
  res.on('data', (d: string) => {
    buf += d;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, nl).replace(/\r$/, ''));
      buf = buf.slice(nl + 1);
    }
  });
  res.on('end', () => {
    const e2e_ms = performance.now() - t0;
    if (buf.length > 0) onLine(buf);
    if (bad !== null) return finish(new AttemptFailure('malformed', bad));
    if (!done && text === '') return finish(new AttemptFailure('malformed', 'stream ended without content or [DONE]'));
    finish(null, { text, ...usage, ttft_ms, e2e_ms, streamed: true });
  });
}

function usageOf(u: unknown): { prompt_tokens: number | null; completion_tokens: number | null } {
  const o = (u ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return {
    prompt_tokens: typeof o.prompt_tokens === 'number' ? o.prompt_tokens : null,
    completion_tokens: typeof o.completion_tokens === 'number' ? o.completion_tokens : null,
  };
}

/** The server's error message from an OpenAI-style `{"error":{"message":…}}` body, or the body's start. */
function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const m = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.message);
    if (typeof m === 'string') return m.slice(0, 300);
  } catch {
    // not JSON: use the text
  }
  return body.slice(0, 300) || '(empty body)';
}
