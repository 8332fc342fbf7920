/**
 * An incremental HTTP/1.1 reply parser (RFC 9112) for the `openai` client: status line, header
 * fields, and the body framed by Content-Length, chunked transfer coding or the connection's close.
 * It does no I/O: bytes go in through {@link ReplyParser.execute} as they arrive, and body bytes come
 * out (as views of the input, not copies) in the same call, so a stream's timestamps are taken when
 * its bytes arrive. Anything that does not frame as a reply is reported as malformed, never guessed:
 * a connection is reused only after a reply that ended exactly where its framing said.
 */

/** What a reply's head says that the client acts on. */
export interface ReplyHead {
  status: number;
  /** `Content-Type`, `''` when absent. */
  contentType: string;
  /** `Location`, for the message of a refused redirect. */
  location: string | undefined;
}

/** Receives one reply's parts, in order: a head, body bytes, then an end (or a malformed verdict). */
export interface ReplySink {
  onHead(head: ReplyHead): void;
  onBody(chunk: Buffer): void;
  /** The body is complete. `reusable`: the connection may carry another request (keep-alive, nothing after the reply). */
  onEnd(reusable: boolean, keepAliveTimeout_s: number | null): void;
  onMalformed(why: string): void;
}

/** Node's default limit on a head (`--max-http-header-size`), bytes; also the limit on chunked trailers. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Longest chunk-size line (with extensions) accepted, bytes. */
const MAX_CHUNK_LINE = 4096;

const HEAD = 0;
const LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_CRLF = 4;
const TRAILERS = 5;
const UNTIL_CLOSE = 6;
const DONE = 7;

const CRLFCRLF = Buffer.from('\r\n\r\n', 'latin1');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\x00-\x08\x0a-\x1f\x7f]*)?$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than HTAB: never valid in a field value. */
const CTL = /[\x00-\x08\x0a-\x1f\x7f]/;
const CHUNK_LINE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?$/;
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i;

/** One connection's parser; reset with {@link start} for each request sent on it. */
export class ReplyParser {
  private sink: ReplySink | null = null;
  private state = DONE;
  /** Head bytes received so far when the head spans network chunks. */
  private pendingHead: Buffer | null = null;
  /** Body bytes still due (Content-Length or the current chunk). */
  private remaining = 0;
  /** A chunk-size or trailer line split across network chunks. */
  private line = '';
  private trailerBytes = 0;
  /** CR/LF bytes already seen after a chunk's data (0–2). */
  private crlf = 0;
  private keepAlive = false;
  private keepAliveTimeout_s: number | null = null;
  /** Whether any byte of this reply has arrived (a close before any is a dropped connection, not a cut reply). */
  started = false;

  /** Expects a new reply, delivered to `sink`. */
  start(sink: ReplySink): void {
    this.sink = sink;
    this.state = HEAD;
    this.pendingHead = null;
    this.line = '';
    this.started = false;
    this.keepAliveTimeout_s = null;
  }

  /** Stops delivering to the current sink (the exchange ended early: a failure, a timeout). */
  stop(): void {
    this.sink = null;
    this.state = DONE;
    this.pendingHead = null;
  }

  /** Whether a reply is in progress. */
  get active(): boolean {
    return this.sink !== null;
  }

  /** Feeds bytes as they arrive. */
  execute(buf: Buffer): void {
    if (buf.length > 0) this.started = true;
    let pos = 0;
    while (this.sink !== null && pos < buf.length) {
      switch (this.state) {
        case HEAD:
          pos = this.head(buf, pos);
          break;
        case LENGTH: {
          const n = Math.min(this.remaining, buf.length - pos);
          this.remaining -= n;
          this.sink.onBody(buf.subarray(pos, (pos += n)));
          if (this.remaining === 0) this.done(buf, pos);
          break;
        }
        case CHUNK_SIZE:
          pos = this.chunkSize(buf, pos);
          break;
        case CHUNK_DATA: {
          const n = Math.min(this.remaining, buf.length - pos);
          this.remaining -= n;
          this.sink.onBody(buf.subarray(pos, (pos += n)));
          if (this.remaining === 0) {
            this.state = CHUNK_CRLF;
            this.crlf = 0;
          }
          break;
        }
        case CHUNK_CRLF: {
          const want = this.crlf === 0 ? 0x0d : 0x0a;
          if (buf[pos] !== want) return this.malformed('a chunk is not followed by CRLF (chunked framing broken)');
          pos++;
          if (++this.crlf === 2) this.state = CHUNK_SIZE;
          break;
        }
        case TRAILERS:
          pos = this.trailers(buf, pos);
          break;
        case UNTIL_CLOSE:
          this.sink.onBody(pos === 0 ? buf : buf.subarray(pos));
          pos = buf.length;
          break;
        default:
          return;
      }
    }
  }

  /**
   * The connection closed (the peer's FIN). Ends a reply framed by the close and returns true;
   * returns false when a reply was in progress and is now cut short (the caller reports it).
   */
  eof(): boolean {
    if (this.sink === null) return true;
    if (this.state !== UNTIL_CLOSE) return false;
    const sink = this.sink;
    this.stop();
    sink.onEnd(false, null);
    return true;
  }

  private malformed(why: string): void {
    const sink = this.sink;
    this.stop();
    sink?.onMalformed(why);
  }

  /** The reply is complete at `pos`; bytes after it mean the connection cannot be trusted again. */
  private done(buf: Buffer, pos: number): void {
    const sink = this.sink!;
    const reusable = this.keepAlive && pos === buf.length;
    const timeout_s = this.keepAliveTimeout_s;
    this.stop();
    sink.onEnd(reusable, timeout_s);
  }

  private head(buf: Buffer, pos: number): number {
    let bytes = pos === 0 ? buf : buf.subarray(pos);
    if (this.pendingHead !== null) bytes = Buffer.concat([this.pendingHead, bytes]);
    const end = bytes.indexOf(CRLFCRLF);
    if (end < 0) {
      if (bytes.length > MAX_HEAD_BYTES) {
        this.malformed(`reply head larger than ${MAX_HEAD_BYTES} bytes`);
        return buf.length;
      }
      this.pendingHead = bytes;
      return buf.length;
    }
    if (end > MAX_HEAD_BYTES) {
      this.malformed(`reply head larger than ${MAX_HEAD_BYTES} bytes`);
      return buf.length;
    }
    // Where the body starts in `buf`: the head may have begun in an earlier network chunk.
    const consumed = end + 4 - (this.pendingHead?.length ?? 0);
    this.pendingHead = null;
    this.parseHead(bytes.toString('latin1', 0, end));
    // A reply without a body (204, 304, Content-Length: 0) is complete with its head.
    if (this.sink !== null && this.state === DONE) this.done(buf, pos + consumed);
    return pos + consumed;
  }

  private parseHead(text: string): void {
    const lines = text.split('\r\n');
    const m = STATUS_LINE.exec(lines[0]!);
    if (m === null) return this.malformed('reply does not start with an HTTP/1.x status line');
    const http10 = m[1] === '0';
    const status = Number(m[2]);
    let contentType = '';
    let location: string | undefined;
    let length: number | null = null;
    let te: string | null = null;
    let connection = '';
    let keepAliveTimeout_s: number | null = null;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      // A leading space or tab is obsolete line folding (RFC 9112 §5.2); a name needs its colon.
      if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) return this.malformed(`reply header line ${i} is not a field (name: value)`);
      const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
      if (CTL.test(value)) return this.malformed(`reply header line ${i} has a control character in its value`);
      switch (line.slice(0, colon).toLowerCase()) {
        case 'content-length': {
          if (!/^\d{1,15}$/.test(value)) return this.malformed(`reply Content-Length is not a number: ${JSON.stringify(value.slice(0, 40))}`);
          const n = Number(value);
          if (length !== null && length !== n) return this.malformed('reply has two different Content-Length values');
          length = n;
          break;
        }
        case 'transfer-encoding':
          te = te === null ? value : `${te}, ${value}`;
          break;
        case 'connection':
          connection = connection === '' ? value : `${connection}, ${value}`;
          break;
        case 'keep-alive': {
          const t = KEEP_ALIVE_TIMEOUT.exec(value);
          if (t) keepAliveTimeout_s = Number(t[1]);
          break;
        }
        case 'content-type':
          contentType = value;
          break;
        case 'location':
          location = value;
          break;
      }
    }
    if (status < 200) {
      if (status === 101) return this.malformed('unexpected 101 Switching Protocols (no upgrade was asked for)');
      if (status < 100) return this.malformed(`reply status ${status} is not an HTTP status`);
      // 1xx (100 Continue, 103 Early Hints): interim; the final reply follows on the same connection.
      this.state = HEAD;
      return;
    }
    const tokens = connection.toLowerCase().split(',').map((s) => s.trim());
    this.keepAlive = http10 ? tokens.includes('keep-alive') : !tokens.includes('close');
    this.keepAliveTimeout_s = keepAliveTimeout_s;
    if (te !== null) {
      // Both framings at once is the request-smuggling shape: refused, as Node's own parser does.
      if (length !== null) return this.malformed('reply has both Transfer-Encoding and Content-Length');
      const codings = te.toLowerCase().split(',').map((s) => s.trim());
      if (codings[codings.length - 1] === 'chunked') this.state = CHUNK_SIZE;
      else {
        this.state = UNTIL_CLOSE;
        this.keepAlive = false;
      }
    } else if (status === 204 || status === 304 || length === 0) this.state = DONE;
    else if (length !== null) {
      this.state = LENGTH;
      this.remaining = length;
    } else {
      this.state = UNTIL_CLOSE;
      this.keepAlive = false;
    }
    this.sink!.onHead({ status, contentType, location });
  }

  /** Reads a line ending in CRLF starting at `pos`; returns it (null while incomplete) and the next position. */
  private readLine(buf: Buffer, pos: number, max: number): [string | null, number] {
    const nl = buf.indexOf(0x0a, pos);
    if (nl < 0) {
      this.line += buf.toString('latin1', pos);
      if (this.line.length > max) this.malformed('a chunked-framing line is too long');
      return [null, buf.length];
    }
    const line = this.line + buf.toString('latin1', pos, nl);
    this.line = '';
    if (!line.endsWith('\r')) {
      this.malformed('a chunked-framing line does not end in CRLF');
      return [null, buf.length];
    }
    if (line.length > max) {
      this.malformed('a chunked-framing line is too long');
      return [null, buf.length];
    }
    return [line.slice(0, -1), nl + 1];
  }

  private chunkSize(buf: Buffer, pos: number): number {
    const [line, next] = this.readLine(buf, pos, MAX_CHUNK_LINE);
    if (line === null) return next;
    const m = CHUNK_LINE.exec(line);
    if (m === null) {
      this.malformed(`bad chunk-size line ${JSON.stringify(line.slice(0, 40))}`);
      return buf.length;
    }
    const size = parseInt(m[1]!, 16);
    if (size === 0) {
      this.state = TRAILERS;
      this.trailerBytes = 0;
    } else {
      this.state = CHUNK_DATA;
      this.remaining = size;
    }
    return next;
  }

  private trailers(buf: Buffer, pos: number): number {
    const [line, next] = this.readLine(buf, pos, MAX_HEAD_BYTES);
    if (line === null) return next;
    if (line === '') {
      this.done(buf, next);
      return buf.length;
    }
    this.trailerBytes += line.length + 2;
    if (this.trailerBytes > MAX_HEAD_BYTES) {
      this.malformed(`chunked trailers larger than ${MAX_HEAD_BYTES} bytes`);
      return buf.length;
    }
    const colon = line.indexOf(':');
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon)) || CTL.test(line.slice(colon + 1))) {
      this.malformed('a chunked trailer line is not a field (name: value)');
      return buf.length;
    }
    return next;
  }
}
