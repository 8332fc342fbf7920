import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { FailureKind } from '../retry.js';
import { StringDecoder } from 'node:string_decoder';
import { guardedLookup } from './guard.js';
import { SseChatReader, usageOf } from './sse.js';

/** Default cap on one reply's body, bytes (`target.max_reply_bytes`): 4 MiB. */
export const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;

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
  /** A reply body larger than this is cut off and recorded as an error; default {@link DEFAULT_MAX_REPLY_BYTES}. */
  max_reply_bytes?: number;
  /** Each streamed chunk carrying output tokens (see `AnswerRequest.onChunk`). */
  onChunk?: (kind: 'content' | 'reasoning') => void;
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
  const length = String(Buffer.byteLength(payload));
  const accept = o.stream ? 'text/event-stream' : 'application/json';
  // One object shape either way (with or without a key), so the request path stays monomorphic.
  const headers: Record<string, string> = o.apiKey
    ? { 'content-type': 'application/json', accept, 'content-length': length, authorization: `Bearer ${o.apiKey}` }
    : { 'content-type': 'application/json', accept, 'content-length': length };
  const target = targetOf(o.url);

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
    const req = target.mod.request({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: 'POST',
      headers,
      agent: o.agent,
      lookup: guardedLookup,
    } as http.RequestOptions);
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
      res.on('error', (e: NodeJS.ErrnoException) => finish(new AttemptFailure('connection', `connection failed: ${e.code ?? e.message}`)));
      res.on('aborted', () => finish(new AttemptFailure('connection', 'connection reset while reading the reply')));
      if (status >= 300 && status < 400) {
        res.resume();
        return finish(new AttemptFailure('redirect', `HTTP ${status} redirect not followed${res.headers.location ? ` (to ${res.headers.location})` : ''}`, status));
      }
      if (status < 200 || status >= 300) {
        let body = '';
        res.on('data', (d: Buffer) => {
          if (body.length < 4096) body += d.toString('utf8');
        });
        // Retry-After is not read: seed 003 fixes the schedule (base × 2^(n−1), capped), so runs stay comparable.
        res.on('end', () => finish(new AttemptFailure('http', `HTTP ${status}: ${errorText(body)}`, status)));
        return;
      }
      const limit = o.max_reply_bytes ?? DEFAULT_MAX_REPLY_BYTES;
      if (o.stream && /text\/event-stream/i.test(type)) readStream(res, t0, limit, finish, o.onChunk);
      else readPlain(res, t0, limit, finish);
    });
    req.end(payload);
    t0 = performance.now();
  });
}

type Finish = (err: AttemptFailure | null, value?: ChatResult) => void;

/** Where a URL's requests go, as `http.request` options (what Node derives from the URL on every call). */
interface RequestTarget {
  href: string;
  mod: typeof http | typeof https;
  protocol: string;
  hostname: string;
  port: number | undefined;
  path: string;
}

/** Per URL object (a target keeps one): its request options, worked out once (again if the URL is changed). */
const targets = new WeakMap<URL, RequestTarget>();

function targetOf(url: URL): RequestTarget {
  let t = targets.get(url);
  if (t === undefined || t.href !== url.href) {
    const h = url.hostname;
    t = {
      href: url.href,
      mod: url.protocol === 'https:' ? https : http,
      protocol: url.protocol,
      // An IPv6 literal without its brackets, the port as a number, the path with its query: as Node's own URL conversion.
      hostname: h.startsWith('[') ? h.slice(1, -1) : h,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
    };
    targets.set(url, t);
  }
  return t;
}

/** Counts a reply's bytes; past the limit the reply is cut off (the socket destroyed) and recorded as an error. */
function overLimit(received: number, limit: number, finish: Finish): boolean {
  if (received <= limit) return false;
  finish(new AttemptFailure('malformed', `reply larger than ${limit} bytes (target.max_reply_bytes): cut off after ${received} bytes`));
  return true;
}

function readPlain(res: http.IncomingMessage, t0: number, limit: number, finish: Finish): void {
  const parts: Buffer[] = [];
  let received = 0;
  let cut = false;
  res.on('data', (d: Buffer) => {
    if (cut) return;
    received += d.length;
    if ((cut = overLimit(received, limit, finish))) return;
    parts.push(d);
  });
  res.on('end', () => {
    if (cut) return;
    const e2e_ms = performance.now() - t0;
    const body = Buffer.concat(parts, received).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return finish(new AttemptFailure('malformed', `reply is not valid JSON (${received} bytes)`));
    }
    const j = json as { choices?: { message?: { content?: unknown } }[]; usage?: unknown };
    const content = Array.isArray(j?.choices) ? j.choices[0]?.message?.content : undefined;
    if (typeof content !== 'string') return finish(new AttemptFailure('malformed', 'reply has no choices[0].message.content'));
    const u = usageOf(j.usage);
    finish(null, { text: content, prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, ttft_ms: null, e2e_ms, streamed: false });
  });
}

function readStream(res: http.IncomingMessage, t0: number, limit: number, finish: Finish, onChunk?: PostOptions['onChunk']): void {
  const reader = new SseChatReader();
  const decoder = new StringDecoder('utf8');
  let ttft_ms: number | null = null;
  reader.onFirstContent = () => (ttft_ms = performance.now() - t0);
  if (onChunk) reader.onToken = onChunk;
  let received = 0;
  let cut = false;
  res.on('data', (d: Buffer) => {
    if (cut) return;
    received += d.length;
    if ((cut = overLimit(received, limit, finish))) return;
    reader.feed(decoder.write(d));
  });
  res.on('end', () => {
    if (cut) return;
    const e2e_ms = performance.now() - t0;
    reader.feed(decoder.end());
    const out = reader.end();
    if ('error' in out) return finish(new AttemptFailure('malformed', out.error));
    finish(null, { text: out.text, prompt_tokens: reader.usage.prompt_tokens, completion_tokens: reader.usage.completion_tokens, ttft_ms, e2e_ms, streamed: true });
  });
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
