import { performance } from 'node:perf_hooks';
import type { FailureKind } from '../retry.js';
import type { Timed } from './deadlines.js';
import { Http1Pool, type Connection, type Exchange, type Origin } from './http1-pool.js';
import type { ReplyHead } from './http1-reply.js';
import { SseChatReader } from './sse.js';
import { Utf8Chunks } from './utf8-chunks.js';

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
  /** The reply's `usage` object as sent (a stream's last usage chunk); `null` when there was none. The target checks it. */
  usage: unknown;
  /** Request sent to first content token, ms; `null` for a plain (non-streamed) reply. */
  ttft_ms: number | null;
  /** Request sent to last byte, ms. */
  e2e_ms: number;
  streamed: boolean;
}

/** One request: its body as an object, or already serialized (`payload`). */
export type PostOptions = PostTarget & ({ body: Record<string, unknown>; payload?: string } | { body?: undefined; payload: string });

interface PostTarget {
  url: URL;
  stream: boolean;
  apiKey?: string;
  timeout_ms: number;
  /** The target's connections ({@link createPool}). */
  pool: Http1Pool;
  signal?: AbortSignal;
  /** A reply body larger than this is cut off and recorded as an error; default {@link DEFAULT_MAX_REPLY_BYTES}. */
  max_reply_bytes?: number;
  /** Each streamed chunk carrying output tokens (see `AnswerRequest.onChunk`). */
  onChunk?: (kind: 'content' | 'reasoning') => void;
}

/** Keep-alive connections sized for concurrency; one pool per target. */
export function createPool(): Http1Pool {
  return new Http1Pool();
}

/**
 * POSTs one chat-completions request over joulebench's HTTP/1.1 client (`Http1Pool`: keep-alive
 * sockets through the metadata-address guard; no redirects are followed: a 3xx is a failure). Streams
 * (SSE) when asked, timing the first content token when its bytes arrive; a server that answers a
 * stream request with plain JSON is read as plain. One limit covers the whole attempt (DNS, connect,
 * TLS, head, body). Throws AttemptFailure for every failure.
 */
export function postChat(o: PostOptions): Promise<ChatResult> {
  return new Promise<ChatResult>((resolve, reject) => {
    const target = targetOf(o.url);
    const head = headOf(target, o.stream, o.apiKey);
    if (head === null) return reject(new AttemptFailure('malformed', 'the API key contains a character not allowed in an HTTP header (a control character or non-ASCII): refused, not sent'));
    const x = new ChatExchange(o, resolve, reject);
    if (o.signal?.aborted) return x.fail(new AttemptFailure('aborted', 'aborted'));
    // The `openai` target sends a payload: each case spliced into a body serialized once.
    const payload = o.payload ?? JSON.stringify(o.body);
    x.conn = o.pool.send(target.origin, `${head}${Buffer.byteLength(payload)}\r\n\r\n${payload}`, x);
    x.t0 = performance.now();
  });
}

/** Where a URL's requests go and the head lines every request to it carries (worked out once per URL). */
interface RequestTarget {
  href: string;
  origin: Origin;
  /** `POST path HTTP/1.1` … up to the Content-Length value, per accept type; for {@link RequestTarget.key}. */
  heads: [plain: string, stream: string] | null;
  key: string | undefined;
}

/** Per URL object (a target keeps one): worked out once (again if the URL is changed). */
const targets = new WeakMap<URL, RequestTarget>();

function targetOf(url: URL): RequestTarget {
  let t = targets.get(url);
  if (t === undefined || t.href !== url.href) {
    const secure = url.protocol === 'https:';
    const h = url.hostname;
    const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
    t = {
      href: url.href,
      // An IPv6 literal without its brackets for the socket; the Host header keeps them (url.host).
      origin: { key: `${url.protocol}//${url.host}`, secure, host: h.startsWith('[') ? h.slice(1, -1) : h, port },
      heads: null,
      key: undefined,
    };
    targets.set(url, t);
  }
  return t;
}

/** A header value may hold visible ASCII, space and tab (Node refuses the rest too; no CR/LF smuggling). */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** The request head up to Content-Length's value; `null` when the key cannot be sent in a header. */
function headOf(t: RequestTarget, stream: boolean, apiKey: string | undefined): string | null {
  if (t.heads === null || t.key !== apiKey) {
    if (apiKey !== undefined && !HEADER_VALUE.test(apiKey)) return null;
    const url = new URL(t.href);
    // The path and query are percent-encoded by the URL parser; the host is ASCII (punycode).
    const start = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n${apiKey ? `Authorization: Bearer ${apiKey}\r\n` : ''}Content-Type: application/json\r\n`;
    t.heads = [`${start}Accept: application/json\r\nContent-Length: `, `${start}Accept: text/event-stream\r\nContent-Length: `];
    t.key = apiKey;
  }
  return t.heads[stream ? 1 : 0];
}

const PLAIN = 0;
const STREAM = 1;
const ERROR_BODY = 2;
/** Bytes of an error reply's body kept for its message. */
const ERROR_BODY_BYTES = 4096;

/**
 * The requests in flight under each abort signal: one 'abort' listener a signal (added with its first
 * request, there until it fires), not one added and removed a request; an EventTarget listener cost
 * about as much as the reply's parsing, and `joulebench run` gives every request the run's signal.
 */
const bySignal = new WeakMap<AbortSignal, Set<ChatExchange>>();

function watchAbort(signal: AbortSignal, x: ChatExchange): void {
  let live = bySignal.get(signal);
  if (live === undefined) {
    const set = (live = new Set());
    bySignal.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const y of [...set]) y.onAbort();
        set.clear();
      },
      { once: true },
    );
  }
  live.add(x);
}

/** One attempt: its deadline, abort watch and reply reading (a class, not closures: one a request). */
class ChatExchange implements Exchange, Timed {
  conn: Connection | null = null;
  t0 = 0;
  private settled = false;
  /** When the attempt runs out of time (`performance.now()`): the pool's one timer watches it. */
  readonly deadline_ms: number;
  private readonly limit: number;
  private mode = PLAIN;
  private status = 0;
  private received = 0;
  private parts: Buffer[] = [];
  /** `parts[0, owned)` are copies; the rest may be views of a read buffer (see `keepChunks`). */
  private owned = 0;
  private reader: SseChatReader | null = null;
  private decoder: Utf8Chunks | null = null;
  private ttft_ms: number | null = null;

  constructor(
    private readonly o: PostOptions,
    private readonly resolve: (r: ChatResult) => void,
    private readonly reject: (e: AttemptFailure) => void,
  ) {
    this.limit = o.max_reply_bytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.deadline_ms = performance.now() + o.timeout_ms;
    o.pool.deadlines.add(this);
    if (o.signal !== undefined) watchAbort(o.signal, this);
  }

  onDeadline(): void {
    this.fail(new AttemptFailure('timeout', `no complete reply within ${this.o.timeout_ms} ms`));
  }

  /** The abort signal fired. */
  onAbort(): void {
    this.fail(new AttemptFailure('aborted', 'aborted'));
  }

  fail(err: AttemptFailure): void {
    if (this.settled) return;
    this.settle();
    // Still on the connection (the reply was not complete): it is closed, never reused.
    if (this.conn !== null && this.conn.x === this) this.conn.abandon();
    this.reject(err);
  }

  private settle(): void {
    this.settled = true;
    this.o.pool.deadlines.delete(this);
    if (this.o.signal !== undefined) bySignal.get(this.o.signal)?.delete(this);
  }

  onHead(h: ReplyHead): void {
    const status = (this.status = h.status);
    if (status >= 300 && status < 400) {
      return this.fail(new AttemptFailure('redirect', `HTTP ${status} redirect not followed${h.location ? ` (to ${h.location})` : ''}`, status));
    }
    if (status < 200 || status >= 300) this.mode = ERROR_BODY;
    else if (this.o.stream && /text\/event-stream/i.test(h.contentType)) {
      this.mode = STREAM;
      const reader = (this.reader = new SseChatReader());
      this.decoder = new Utf8Chunks();
      reader.onFirstContent = () => (this.ttft_ms = performance.now() - this.t0);
      if (this.o.onChunk) reader.onToken = this.o.onChunk;
    }
  }

  onBody(d: Buffer): void {
    if (this.settled) return;
    this.received += d.length;
    if (this.mode === ERROR_BODY) {
      // Retry-After is not read: seed 003 fixes the schedule (base × 2^(n−1), capped), so runs stay comparable.
      if (this.received - d.length < ERROR_BODY_BYTES) this.parts.push(d);
      if (this.received > this.limit) this.httpError();
      return;
    }
    if (this.received > this.limit) {
      return this.fail(new AttemptFailure('malformed', `reply larger than ${this.limit} bytes (target.max_reply_bytes): cut off after ${this.received} bytes`));
    }
    if (this.mode === STREAM) this.reader!.feed(this.decoder!.write(d));
    else this.parts.push(d);
  }

  onEnd(): void {
    if (this.settled) return;
    const e2e_ms = performance.now() - this.t0;
    if (this.mode === ERROR_BODY) return this.httpError();
    if (this.mode === STREAM) {
      const reader = this.reader!;
      reader.feed(this.decoder!.end());
      const out = reader.end();
      if ('error' in out) return this.fail(new AttemptFailure('malformed', out.error));
      return this.done({ text: out.text, usage: reader.usage, ttft_ms: this.ttft_ms, e2e_ms, streamed: true });
    }
    const body = (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.received)).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return this.fail(new AttemptFailure('malformed', `reply is not valid JSON (${this.received} bytes)`));
    }
    const j = json as { choices?: { message?: { content?: unknown } }[]; usage?: unknown };
    const content = Array.isArray(j?.choices) ? j.choices[0]?.message?.content : undefined;
    if (typeof content !== 'string') return this.fail(new AttemptFailure('malformed', 'reply has no choices[0].message.content'));
    this.done({ text: content, usage: j.usage ?? null, ttft_ms: null, e2e_ms, streamed: false });
  }

  keepChunks(): void {
    const parts = this.parts;
    for (let i = this.owned; i < parts.length; i++) parts[i] = Buffer.from(parts[i]!);
    this.owned = parts.length;
  }

  onMalformed(why: string): void {
    this.fail(new AttemptFailure('malformed', `reply is not valid HTTP/1.1: ${why}`));
  }

  onSocketError(e: NodeJS.ErrnoException): void {
    if (e.code === 'E_FORBIDDEN_ADDRESS') return this.fail(new AttemptFailure('forbidden', e.message));
    this.fail(new AttemptFailure('connection', `connection failed: ${e.code ?? e.message}`));
  }

  onCutShort(): void {
    this.fail(new AttemptFailure('connection', 'connection reset while reading the reply'));
  }

  private httpError(): void {
    const kept = Buffer.concat(this.parts).subarray(0, ERROR_BODY_BYTES).toString('utf8');
    this.fail(new AttemptFailure('http', `HTTP ${this.status}: ${errorText(kept)}`, this.status));
  }

  private done(r: ChatResult): void {
    this.settle();
    this.resolve(r);
  }
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
