import { performance } from 'node:perf_hooks';
import type { FailureKind } from '../retry.js';
import type { Dispatcher } from 'undici';
import { createDispatcher, proxyConfigured } from '../dispatcher.js';
import { Deadlines, type Timed } from './deadlines.js';
import { assertHostAllowed } from './guard.js';
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
  /** Gaps between successive token-bearing chunks from the first content chunk on, ms (vLLM's ITL); `null` for a plain reply. */
  itl_ms: number[] | null;
}

/** One request: its body as an object, or already serialized (`payload`). */
export type PostOptions = PostTarget & ({ body: Record<string, unknown>; payload?: string } | { body?: undefined; payload: string });

interface PostTarget {
  url: URL;
  stream: boolean;
  apiKey?: string;
  timeout_ms: number;
  pool: HttpPool;
  signal?: AbortSignal;
  /** A reply body larger than this is cut off and recorded as an error; default {@link DEFAULT_MAX_REPLY_BYTES}. */
  max_reply_bytes?: number;
  /** Each streamed chunk carrying output tokens (see `AnswerRequest.onChunk`). */
  onChunk?: (kind: 'content' | 'reasoning') => void;
}

/** One target's connections: an undici dispatcher ({@link createDispatcher}) and its requests' deadlines. */
export class HttpPool {
  readonly deadlines = new Deadlines();
  private d: Dispatcher | null = null;
  /** Whether a proxy was configured when the dispatcher was made: then hosts are checked here. */
  private proxied = false;
  private readonly checked = new Map<string, Promise<void>>();

  get dispatcher(): Dispatcher {
    if (this.d === null) {
      this.d = createDispatcher();
      this.proxied = proxyConfigured();
    }
    return this.d;
  }

  /** Through a proxy the proxy resolves the name: checked here too, once per host. `null`: nothing to wait for. */
  hostCheck(hostname: string): Promise<void> | null {
    if (!this.proxied) return null;
    let c = this.checked.get(hostname);
    if (c === undefined) this.checked.set(hostname, (c = assertHostAllowed(hostname)));
    return c;
  }

  /** Closes every connection, idle or busy (a request in flight fails as a connection failure). A later request connects anew. */
  destroy(): void {
    const d = this.d;
    this.d = null;
    if (d !== null) void d.destroy(new Error('connection closed by the client (target closed)')).catch(() => {});
  }
}

/** POSTs one chat-completions request (SSE when asked; no redirect; one limit a whole attempt). Throws AttemptFailure. */
export function postChat(o: PostOptions): Promise<ChatResult> {
  return new Promise<ChatResult>((resolve, reject) => {
    const headers = headersOf(o.url, o.apiKey);
    if (headers === null) return reject(new AttemptFailure('malformed', 'the API key contains a character not allowed in an HTTP header (a control character or non-ASCII): refused, not sent'));
    const x = new ChatExchange(o, resolve, reject);
    if (o.signal?.aborted) return x.fail(new AttemptFailure('aborted', 'aborted'));
    const body = o.payload ?? JSON.stringify(o.body);
    const dispatcher = o.pool.dispatcher;
    const check = o.pool.hostCheck(o.url.hostname);
    if (check === null) x.send(dispatcher, headers, body);
    else check.then(() => x.send(dispatcher, headers, body), (e: Error) => x.fail(new AttemptFailure('forbidden', e.message)));
  });
}

/** What every request to one URL with one key carries (worked out once per URL object and key). */
interface RequestHeaders {
  href: string;
  key: string | undefined;
  origin: string;
  path: string;
  /** Header name/value pairs, per accept type. */
  lists: [plain: string[], stream: string[]];
}

/** Per URL object (a target keeps one); worked out again if the URL or the key changes. */
const byUrl = new WeakMap<URL, RequestHeaders>();

/** A header value may hold visible ASCII, space and tab (no CR/LF smuggling). */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

/** The request's origin, path and headers; `null` when the key cannot be sent in a header. */
function headersOf(url: URL, apiKey: string | undefined): RequestHeaders | null {
  let h = byUrl.get(url);
  if (h === undefined || h.href !== url.href || h.key !== apiKey) {
    if (apiKey !== undefined && !HEADER_VALUE.test(apiKey)) return null;
    const common = apiKey ? ['authorization', `Bearer ${apiKey}`, 'content-type', 'application/json'] : ['content-type', 'application/json'];
    h = {
      href: url.href,
      key: apiKey,
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      lists: [
        [...common, 'accept', 'application/json'],
        [...common, 'accept', 'text/event-stream'],
      ],
    };
    byUrl.set(url, h);
  }
  return h;
}

const PLAIN = 0;
const STREAM = 1;
const ERROR_BODY = 2;
/** Bytes of an error reply's body kept for its message. */
const ERROR_BODY_BYTES = 4096;

/** The requests in flight under each abort signal: one 'abort' listener a signal, not one a request (measurably costly). */
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

/** undici's error codes (and Node's) that say the peer closed or reset the connection. */
const CLOSED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
/** undici's error codes for a reply that does not frame as HTTP/1.1 (its parser's are `HPE_…`). */
const MALFORMED = new Set(['UND_ERR_RES_CONTENT_LENGTH_MISMATCH', 'UND_ERR_HEADERS_OVERFLOW']);

/** One attempt as an undici dispatch handler; body bytes are read as each chunk lands, so TTFT is taken then. */
class ChatExchange implements Dispatcher.DispatchHandler, Timed {
  t0 = 0;
  private settled = false;
  private controller: Dispatcher.DispatchController | null = null;
  readonly deadline_ms: number;
  private readonly limit: number;
  private mode = PLAIN;
  private status = 0;
  private started = false;
  private received = 0;
  private parts: Buffer[] = [];
  private reader: SseChatReader | null = null;
  private decoder: Utf8Chunks | null = null;
  private ttft_ms: number | null = null;
  /** Arrival of every token-bearing chunk from the first content chunk on (`performance.now()`). */
  private readonly tokenTimes: number[] = [];

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

  /** Hands the request to undici, unless it timed out or was aborted while its host was checked. */
  send(dispatcher: Dispatcher, h: RequestHeaders, body: string): void {
    if (this.settled) return;
    this.t0 = performance.now();
    try {
      dispatcher.dispatch({ origin: h.origin, path: h.path, method: 'POST', headers: h.lists[this.o.stream ? 1 : 0], body }, this);
    } catch (e) {
      this.fail(new AttemptFailure('connection', `connection failed: ${(e as Error).message}`));
    }
  }

  onDeadline(): void {
    this.fail(new AttemptFailure('timeout', `no complete reply within ${this.o.timeout_ms} ms`));
  }

  onAbort(): void {
    this.fail(new AttemptFailure('aborted', 'aborted'));
  }

  fail(err: AttemptFailure): void {
    if (this.settled) return;
    this.settle();
    // In flight: undici closes the connection; still connecting: aborted once it has one.
    this.controller?.abort(err);
    this.reject(err);
  }

  private settle(): void {
    this.settled = true;
    this.o.pool.deadlines.delete(this);
    if (this.o.signal !== undefined) bySignal.get(this.o.signal)?.delete(this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('aborted'));
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    // An interim 1xx reply (100 Continue, 103 Early Hints): the final one follows.
    if (this.settled || status < 200) return;
    this.started = true;
    this.status = status;
    if (status >= 300 && status < 400) {
      const location = headers.location;
      return this.fail(new AttemptFailure('redirect', `HTTP ${status} redirect not followed${location ? ` (to ${String(location)})` : ''}`, status));
    }
    if (status < 200 || status >= 300) this.mode = ERROR_BODY;
    else if (this.o.stream && /text\/event-stream/i.test(String(headers['content-type'] ?? ''))) {
      this.mode = STREAM;
      const reader = (this.reader = new SseChatReader());
      this.decoder = new Utf8Chunks();
      reader.onFirstContent = () => (this.ttft_ms = performance.now() - this.t0);
      const onChunk = this.o.onChunk;
      const times = this.tokenTimes;
      reader.onToken = (kind) => {
        if (kind === 'content' || times.length > 0) times.push(performance.now());
        if (onChunk) onChunk(kind);
      };
    }
  }

  onResponseData(_c: Dispatcher.DispatchController, d: Buffer): void {
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

  onResponseEnd(): void {
    if (this.settled) return;
    const e2e_ms = performance.now() - this.t0;
    if (this.mode === ERROR_BODY) return this.httpError();
    if (this.mode === STREAM) {
      const reader = this.reader!;
      reader.feed(this.decoder!.end());
      const out = reader.end();
      if ('error' in out) return this.fail(new AttemptFailure('malformed', out.error));
      const t = this.tokenTimes;
      const itl_ms = t.slice(1).map((at, i) => at - t[i]!);
      return this.done({ text: out.text, usage: reader.usage, ttft_ms: this.ttft_ms, e2e_ms, streamed: true, itl_ms });
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
    this.done({ text: content, usage: j.usage ?? null, ttft_ms: null, e2e_ms, streamed: false, itl_ms: null });
  }

  onResponseError(_c: Dispatcher.DispatchController | null, e: Error & { code?: string; cause?: unknown }): void {
    if (this.settled) return;
    const code = e.code ?? (e.cause as { code?: string } | undefined)?.code;
    if (code === 'E_FORBIDDEN_ADDRESS') return this.fail(new AttemptFailure('forbidden', e.message));
    if (e.name === 'HTTPParserError' || code?.startsWith('HPE_') || (code !== undefined && MALFORMED.has(code))) {
      return this.fail(new AttemptFailure('malformed', `reply is not valid HTTP/1.1: ${e.message}${code ? ` (${code})` : ''}`));
    }
    if (code !== undefined && CLOSED.has(code)) {
      const why = this.started ? 'connection reset while reading the reply' : `connection failed: the server closed the connection before replying (${code})`;
      return this.fail(new AttemptFailure('connection', why));
    }
    this.fail(new AttemptFailure('connection', `connection failed: ${code ?? e.message}${code !== undefined && e.message && !e.message.includes(code) ? ` (${e.message})` : ''}`));
  }

  private httpError(): void {
    const kept = Buffer.concat(this.parts).subarray(0, ERROR_BODY_BYTES).toString('utf8');
    this.fail(new AttemptFailure('http', `HTTP ${this.status}: ${errorText(kept)}`, this.status));
  }

  private done(r: ChatResult): void {
    this.settle();
    // undici releases the connection in a setImmediate queued after these callbacks: resolving in an
    // immediate after it lets the caller's next request reuse this connection.
    process.nextTick(resolveAfterRelease, this.resolve, r);
  }
}

function resolveAfterRelease(resolve: (r: ChatResult) => void, r: ChatResult): void {
  setImmediate(resolve, r);
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
