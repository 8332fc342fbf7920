import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { Deadlines } from './deadlines.js';
import { guardedLookup } from './guard.js';
import { ReplyParser, type ReplyHead, type ReplySink } from './http1-reply.js';

/** Where a request goes: one origin, as worked out from a URL. */
export interface Origin {
  /** `protocol//host:port`: idle connections are kept per origin. */
  key: string;
  secure: boolean;
  /** Host name, or an IP literal without brackets. */
  host: string;
  port: number;
}

/** One request in flight, as its connection reports to it. */
export interface Exchange {
  onHead(head: ReplyHead): void;
  onBody(chunk: Buffer): void;
  /** The reply is complete (the connection is already back in the pool or closed). */
  onEnd(): void;
  onMalformed(why: string): void;
  /** The connection failed: DNS (the metadata guard's `E_FORBIDDEN_ADDRESS` among them), connect, TLS, a reset before any reply byte. */
  onSocketError(e: NodeJS.ErrnoException): void;
  /** The connection closed in the middle of the reply. */
  onCutShort(): void;
  /**
   * The body chunks given to `onBody` so far were views of a read buffer that the next read
   * overwrites: copy any still kept. Called after each read while the reply is in progress.
   */
  keepChunks(): void;
}

/** Bytes one read may bring on a plain TCP connection (as much as Node's own reads). */
const READ_BUFFER_BYTES = 64 * 1024;
/**
 * The one buffer every plain TCP connection reads into (`onread`: no Buffer a read and no stream
 * machinery): a read is parsed before the next one lands, the parser keeps no view of it, and the
 * exchange copies the body chunks it keeps (`keepChunks`). TLS sockets read as streams.
 */
let readBuffer: Buffer | null = null;

/** One keep-alive connection: a socket, its reply parser, and the exchange it carries (none while idle). */
export class Connection implements ReplySink {
  readonly parser = new ReplyParser();
  x: Exchange | null = null;
  /** `performance.now()` after which an idle connection is not reused (the server's `Keep-Alive: timeout`). */
  expires_ms = Infinity;
  idle = false;

  constructor(
    private readonly pool: Http1Pool,
    readonly key: string,
    readonly socket: net.Socket,
    /** Whether reads arrive through {@link Connection.onRead} into the shared read buffer (plain TCP), not as 'data' events. */
    shared: boolean,
  ) {
    if (!shared) socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (e: NodeJS.ErrnoException) => this.onError(e));
    socket.on('end', () => this.onEof());
    socket.on('close', () => this.onClose());
  }

  /** The exchange gave up (timeout, abort, size cap, refused status): the connection is closed, never reused. */
  abandon(): void {
    this.x = null;
    this.parser.stop();
    this.pool.forget(this);
    this.socket.destroy();
  }

  onHead(head: ReplyHead): void {
    this.x?.onHead(head);
  }

  onBody(chunk: Buffer): void {
    this.x?.onBody(chunk);
  }

  onEnd(reusable: boolean, keepAliveTimeout_s: number | null): void {
    const x = this.x;
    this.x = null;
    if (reusable && (keepAliveTimeout_s === null || keepAliveTimeout_s > 1)) this.pool.release(this, keepAliveTimeout_s);
    else this.abandon();
    x?.onEnd();
  }

  onMalformed(why: string): void {
    const x = this.x;
    this.abandon();
    x?.onMalformed(why);
  }

  private onData(d: Buffer): void {
    // Bytes nobody asked for (after a reply, on an idle connection): its framing cannot be trusted.
    if (this.x === null) return this.abandon();
    this.parser.execute(d);
  }

  /** @internal `n` bytes read into the shared read buffer. */
  onRead(n: number, buf: Buffer): void {
    if (this.x === null) return this.abandon();
    this.parser.execute(n === buf.length ? buf : buf.subarray(0, n));
    // The next read overwrites these bytes: a reply still in progress keeps copies of its chunks.
    this.x?.keepChunks();
  }

  private onError(e: NodeJS.ErrnoException): void {
    const x = this.x;
    this.abandon();
    x?.onSocketError(e);
  }

  private onEof(): void {
    const x = this.x;
    if (x === null) return this.abandon();
    if (this.parser.eof()) return; // a reply framed by the close: ended (and the connection dropped) by the parser
    this.lost(x);
  }

  private onClose(): void {
    const x = this.x;
    if (x === null) return this.pool.forget(this);
    this.lost(x);
  }

  /** Closed while `x` waited: before any byte of a reply it is a dropped connection (Node's "socket hang up"), else a cut reply. */
  private lost(x: Exchange): void {
    const started = this.parser.started;
    this.abandon();
    if (started) x.onCutShort();
    else x.onSocketError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
  }
}

/**
 * Keep-alive HTTP/1.1 connections for one target, sized for any concurrency (a new connection when no
 * idle one is free; the most recently used idle one first, as Node's agent does). Every connection
 * resolves its host through {@link guardedLookup}, so a name pointing at a metadata address is refused
 * after DNS and before the socket (and the key) goes out; TLS verifies the certificate as Node's
 * `https` does (system CAs and `NODE_EXTRA_CA_CERTS`). Idle sockets do not keep the process alive.
 */
export class Http1Pool {
  /** The per-attempt deadlines of this pool's requests, one timer for all. */
  readonly deadlines = new Deadlines();
  private readonly idleByKey = new Map<string, Connection[]>();
  private readonly open = new Set<Connection>();

  /** Sends `data` (the request's head and body) on an idle connection to `origin` or a new one; `x` hears the reply. */
  send(origin: Origin, data: string, x: Exchange): Connection {
    const conn = this.take(origin.key) ?? this.connect(origin);
    conn.x = x;
    conn.parser.start(conn);
    conn.socket.write(data);
    return conn;
  }

  /** Closes every connection, idle or busy (a request in flight fails as a reset). The pool stays usable: a later request connects anew. */
  destroy(): void {
    for (const c of [...this.open]) {
      const x = c.x;
      c.abandon();
      x?.onSocketError(Object.assign(new Error('connection closed by the client (target closed)'), { code: 'ECONNRESET' }));
    }
    this.idleByKey.clear();
    this.deadlines.clear();
  }

  /** Connections open now (idle and busy). */
  get size(): number {
    return this.open.size;
  }

  /** @internal A connection whose reply ended cleanly goes back to the idle list. */
  release(conn: Connection, keepAliveTimeout_s: number | null): void {
    conn.expires_ms = keepAliveTimeout_s === null ? Infinity : performance.now() + (keepAliveTimeout_s - 1) * 1000;
    conn.idle = true;
    conn.socket.unref();
    let list = this.idleByKey.get(conn.key);
    if (list === undefined) this.idleByKey.set(conn.key, (list = []));
    list.push(conn);
  }

  /** @internal A connection closed or given up: out of every list. */
  forget(conn: Connection): void {
    this.open.delete(conn);
    if (!conn.idle) return;
    conn.idle = false;
    const list = this.idleByKey.get(conn.key);
    const i = list === undefined ? -1 : list.indexOf(conn);
    if (i >= 0) list!.splice(i, 1);
  }

  private take(key: string): Connection | undefined {
    const list = this.idleByKey.get(key);
    if (list === undefined || list.length === 0) return undefined;
    const now = performance.now();
    for (let c = list.pop(); c !== undefined; c = list.pop()) {
      c.idle = false;
      if (c.expires_ms > now && !c.socket.destroyed) {
        c.socket.ref();
        return c;
      }
      c.abandon();
    }
    return undefined;
  }

  private connect(origin: Origin): Connection {
    let conn: Connection | null = null;
    const socket = origin.secure
      ? tls.connect({ host: origin.host, port: origin.port, lookup: guardedLookup, servername: net.isIP(origin.host) === 0 ? origin.host : '', ALPNProtocols: ['http/1.1'] })
      : net.connect({
          host: origin.host,
          port: origin.port,
          lookup: guardedLookup,
          noDelay: true,
          onread: { buffer: (readBuffer ??= Buffer.allocUnsafe(READ_BUFFER_BYTES)), callback: (n: number, buf: Uint8Array) => (conn!.onRead(n, buf as Buffer), true) },
        });
    if (origin.secure) socket.setNoDelay(true);
    socket.setKeepAlive(true, 1000);
    conn = new Connection(this, origin.key, socket, !origin.secure);
    this.open.add(conn);
    return conn;
  }
}
