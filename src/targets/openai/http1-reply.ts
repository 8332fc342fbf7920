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
const CR = 0x0d;
const LF = 0x0a;
/** RFC 9110 `tchar`: the bytes a field name may hold. */
const TCHAR = (() => {
  const t = new Uint8Array(256);
  for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") t[c.charCodeAt(0)] = 1;
  return t;
})();
/** Hex digit values; 255 for any other byte. */
const HEX = (() => {
  const t = new Uint8Array(256).fill(255);
  for (let i = 0; i < 16; i++) t['0123456789abcdef'.charCodeAt(i)] = t['0123456789ABCDEF'.charCodeAt(i)] = i;
  return t;
})();
const HTTP1 = 'HTTP/1.';
const KEEP_ALIVE_TIMEOUT = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i;

/** A control byte other than HTAB: never valid in a reason phrase or a field value. */
function isCtl(b: number): boolean {
  return (b < 0x20 && b !== 0x09) || b === 0x7f;
}

/** Whether `bytes[at…]` spells `lower` (lower-case letters and `-`), ignoring the case of letters. */
function nameIs(bytes: Buffer, at: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) if ((bytes[at + i]! | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

interface FieldSink {
  /** One field, by its bounds in `bytes`; returns why it is refused, or null. */
  field(bytes: Buffer, nameAt: number, nameLen: number, valueAt: number, valueEnd: number): string | null;
}

/**
 * Checks the field lines of `bytes[start, end)` (each `name: value` and CRLF-terminated; `end` is just
 * past the last CRLF) and calls `onField` with each field's name and value bounds (value trimmed).
 * Returns why the block is malformed, or null. Works on the bytes: no string per line.
 */
function scanFields(bytes: Buffer, start: number, end: number, onField: FieldSink | null): string | null {
  let i = start;
  for (let line = 1; i < end; line++) {
    const nameAt = i;
    while (i < end && TCHAR[bytes[i]!] === 1) i++;
    // A leading space or tab is obsolete line folding (RFC 9112 §5.2); a name needs its colon.
    if (i === nameAt || bytes[i] !== 0x3a) return `header line ${line} is not a field (name: value)`;
    const nameLen = i - nameAt;
    i++;
    while (bytes[i] === 0x20 || bytes[i] === 0x09) i++;
    const valueAt = i;
    for (; i < end && bytes[i] !== CR; i++) if (isCtl(bytes[i]!)) return `header line ${line} has a control character in its value`;
    if (bytes[i + 1] !== LF) return `header line ${line} does not end in CRLF`;
    let valueEnd = i;
    while (valueEnd > valueAt && (bytes[valueEnd - 1] === 0x20 || bytes[valueEnd - 1] === 0x09)) valueEnd--;
    i += 2;
    if (onField !== null) {
      const why = onField.field(bytes, nameAt, nameLen, valueAt, valueEnd);
      if (why !== null) return why;
    }
  }
  return null;
}

/** Longest field value remembered by {@link ValueMemo}, bytes. */
const MEMO_MAX_BYTES = 128;

/**
 * The last value one header field had on a connection, as bytes and as the string read from them: a
 * server sends the same `Content-Type`, `Connection`, `Keep-Alive` and `Transfer-Encoding` values in
 * every reply, and comparing a few bytes costs less than making the string again (and the work done
 * on it: the token split, the timeout pattern), once per reply.
 */
class ValueMemo {
  private bytes = Buffer.alloc(0);
  private len = -1;
  text = '';

  /** `bytes[v0, v1)` read as latin1: the remembered string when the bytes are the same as last time. */
  read(bytes: Buffer, v0: number, v1: number): string {
    const len = v1 - v0;
    if (len === this.len) {
      const m = this.bytes;
      let i = 0;
      while (i < len && m[i] === bytes[v0 + i]) i++;
      if (i === len) return this.text;
    }
    const text = bytes.toString('latin1', v0, v1);
    if (len <= MEMO_MAX_BYTES) {
      if (this.bytes.length < len) this.bytes = Buffer.allocUnsafe(MEMO_MAX_BYTES);
      bytes.copy(this.bytes, 0, v0, v1);
      this.len = len;
      this.text = text;
    } else this.len = -1;
    return text;
  }
}

/** Index of the CRLFCRLF that ends a head in `bytes` at or after `from`, or -1 (a loop: heads are short, a native call costs more). */
function headEndOf(bytes: Buffer, from: number): number {
  // Past MAX_HEAD_BYTES + 1 the head is too large wherever it ends (the caller refuses it either way).
  const last = Math.min(bytes.length - 4, MAX_HEAD_BYTES + 1);
  for (let i = from; i <= last; i++) {
    if (bytes[i] === CR && bytes[i + 1] === LF && bytes[i + 2] === CR && bytes[i + 3] === LF) return i;
  }
  return -1;
}

/** `bytes` to keep past this `execute` call: a copy unless it is already one (joined with earlier bytes), never a view of the input, whose memory the caller may reuse. */
function keep(bytes: Buffer, joined: boolean): Buffer {
  return joined ? bytes : Buffer.from(bytes);
}

/**
 * One connection's parser; reset with {@link start} for each request sent on it. It keeps no view of
 * the bytes given to {@link ReplyParser.execute} once the call returns (the caller may read into the
 * same memory again); body chunks given to the sink are views, valid during the sink's call.
 */
export class ReplyParser implements FieldSink {
  private sink: ReplySink | null = null;
  private state = DONE;
  /** Head (or trailer) bytes received so far when they span network chunks. */
  private pending: Buffer | null = null;
  /** Body bytes still due (Content-Length or the current chunk). */
  private remaining = 0;
  /** Chunk-size line: 0 digits, 1 after the digits, 2 in an extension, 3 after its CR. */
  private sizePhase = 0;
  private sizeDigits = 0;
  private sizeLineBytes = 0;
  /** CR/LF bytes already seen after a chunk's data (0–2). */
  private crlf = 0;
  private keepAlive = false;
  private keepAliveTimeout_s: number | null = null;
  private status = 0;
  // The head's fields as they are read (reset per head).
  private length: number | null = null;
  private te: string | null = null;
  private connection = '';
  private contentType = '';
  private location: string | undefined = undefined;
  // The last values seen on this connection, and what was worked out from them.
  private readonly memoType = new ValueMemo();
  private readonly memoConnection = new ValueMemo();
  private readonly memoKeepAlive = new ValueMemo();
  private readonly memoTe = new ValueMemo();
  private keepAliveText: string | null = null;
  private keepAliveValue_s: number | null = null;
  private connectionText: string | null = null;
  private connectionTokens: string[] = [];
  private teText: string | null = null;
  private teChunked = false;
  /** Whether any byte of this reply has arrived (a close before any is a dropped connection, not a cut reply). */
  started = false;

  /** Expects a new reply, delivered to `sink`. */
  start(sink: ReplySink): void {
    this.sink = sink;
    this.state = HEAD;
    this.pending = null;
    this.started = false;
  }

  /** Stops delivering to the current sink (the exchange ended early: a failure, a timeout). */
  stop(): void {
    this.sink = null;
    this.state = DONE;
    this.pending = null;
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
          if (this.remaining === 0 && this.sink !== null) this.done(buf, pos);
          break;
        }
        case CHUNK_SIZE:
          pos = this.chunkSize(buf, pos);
          break;
        case CHUNK_DATA: {
          const n = Math.min(this.remaining, buf.length - pos);
          this.remaining -= n;
          this.sink.onBody(buf.subarray(pos, (pos += n)));
          if (this.remaining === 0 && this.sink !== null) {
            this.state = CHUNK_CRLF;
            this.crlf = 0;
          }
          break;
        }
        case CHUNK_CRLF:
          if (buf[pos] !== (this.crlf === 0 ? CR : LF)) return this.malformed('a chunk is not followed by CRLF (chunked framing broken)');
          pos++;
          if (++this.crlf === 2) this.startChunkSize();
          break;
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

  /** @internal One head field (see {@link scanFields}): the six the client acts on are read, the rest only checked. */
  field(bytes: Buffer, at: number, len: number, v0: number, v1: number): string | null {
    switch (len) {
      case 8:
        if (nameIs(bytes, at, 'location')) this.location = bytes.toString('latin1', v0, v1);
        break;
      case 10:
        if (nameIs(bytes, at, 'connection')) {
          const v = this.memoConnection.read(bytes, v0, v1);
          this.connection = this.connection === '' ? v : `${this.connection}, ${v}`;
        } else if (nameIs(bytes, at, 'keep-alive')) {
          const v = this.memoKeepAlive.read(bytes, v0, v1);
          if (v !== this.keepAliveText) {
            const t = KEEP_ALIVE_TIMEOUT.exec(v);
            this.keepAliveText = v;
            this.keepAliveValue_s = t ? Number(t[1]) : null;
          }
          if (this.keepAliveValue_s !== null) this.keepAliveTimeout_s = this.keepAliveValue_s;
        }
        break;
      case 12:
        if (nameIs(bytes, at, 'content-type')) this.contentType = this.memoType.read(bytes, v0, v1);
        break;
      case 14:
        if (nameIs(bytes, at, 'content-length')) {
          let n = 0;
          for (let i = v0; i < v1; i++) {
            const d = bytes[i]! - 0x30;
            if (d < 0 || d > 9 || v1 - v0 > 15) return `Content-Length is not a number: ${JSON.stringify(bytes.toString('latin1', v0, Math.min(v1, v0 + 40)))}`;
            n = n * 10 + d;
          }
          if (v0 === v1) return 'Content-Length is empty';
          if (this.length !== null && this.length !== n) return 'two different Content-Length values';
          this.length = n;
        }
        break;
      case 17:
        if (nameIs(bytes, at, 'transfer-encoding')) {
          const v = this.memoTe.read(bytes, v0, v1);
          this.te = this.te === null ? v : `${this.te}, ${v}`;
        }
        break;
    }
    return null;
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
    const before = this.pending?.length ?? 0;
    if (before > 0) bytes = Buffer.concat([this.pending!, bytes]);
    const end = headEndOf(bytes, 0);
    if (end < 0 || end > MAX_HEAD_BYTES) {
      if (end >= 0 || bytes.length > MAX_HEAD_BYTES) {
        this.malformed(`reply head larger than ${MAX_HEAD_BYTES} bytes`);
        return buf.length;
      }
      this.pending = keep(bytes, before > 0);
      return buf.length;
    }
    this.pending = null;
    // Where the body starts in `buf`: the head may have begun in an earlier network chunk.
    const next = pos + end + 4 - before;
    const why = this.parseHead(bytes, end + 2);
    if (why !== null) {
      this.malformed(why);
      return buf.length;
    }
    if (this.state === HEAD) return next; // an interim 1xx reply: the final one follows
    this.sink!.onHead({ status: this.status, contentType: this.contentType, location: this.location });
    // A reply without a body (204, 304, Content-Length: 0) is complete with its head.
    if (this.sink !== null && this.state === DONE) this.done(buf, next);
    return next;
  }

  /** Reads a head (`bytes[0, end)`, ending in CRLF) and sets the body's framing; returns why it is malformed, or null. */
  private parseHead(bytes: Buffer, end: number): string | null {
    // HTTP/1.x SP 3DIGIT [SP reason] CRLF
    let i = 0;
    while (i < 7 && bytes[i] === HTTP1.charCodeAt(i)) i++;
    if (i < 7 || (bytes[7] !== 0x30 && bytes[7] !== 0x31) || bytes[8] !== 0x20) {
      return 'reply does not start with an HTTP/1.x status line';
    }
    let status = 0;
    for (let i = 9; i < 12; i++) {
      const d = bytes[i]! - 0x30;
      if (d < 0 || d > 9) return 'reply does not start with an HTTP/1.x status line';
      status = status * 10 + d;
    }
    i = 12;
    if (bytes[i] === 0x20) for (i++; i < end && bytes[i] !== CR; i++) if (isCtl(bytes[i]!)) return 'reply status line has a control character';
    if (bytes[i] !== CR || bytes[i + 1] !== LF) return 'reply does not start with an HTTP/1.x status line';
    this.length = null;
    this.te = null;
    this.connection = '';
    this.contentType = '';
    this.location = undefined;
    this.keepAliveTimeout_s = null;
    const why = scanFields(bytes, i + 2, end, this);
    if (why !== null) return `reply ${why}`;
    if (status < 200) {
      if (status === 101) return 'unexpected 101 Switching Protocols (no upgrade was asked for)';
      if (status < 100) return `reply status ${status} is not an HTTP status`;
      // 1xx (100 Continue, 103 Early Hints): interim; the final reply follows on the same connection.
      this.state = HEAD;
      return null;
    }
    this.status = status;
    const http10 = bytes[7] === 0x30;
    if (this.connection !== this.connectionText) {
      const c = this.connection.toLowerCase();
      this.connectionText = this.connection;
      this.connectionTokens = c === '' ? [] : c === 'keep-alive' ? [c] : c.split(',').map((t) => t.trim());
    }
    const tokens = this.connectionTokens;
    this.keepAlive = http10 ? tokens.includes('keep-alive') : !tokens.includes('close');
    const te = this.te as string | null; // set by field(), through scanFields
    if (te !== null) {
      // Both framings at once is the request-smuggling shape: refused, as Node's own parser does.
      if (this.length !== null) return 'reply has both Transfer-Encoding and Content-Length';
      if (te !== this.teText) {
        const codings = te.toLowerCase().split(',');
        this.teText = te;
        this.teChunked = codings[codings.length - 1]!.trim() === 'chunked';
      }
      if (this.teChunked) this.startChunkSize();
      else {
        this.state = UNTIL_CLOSE;
        this.keepAlive = false;
      }
    } else if (status === 204 || status === 304 || this.length === 0) this.state = DONE;
    else if (this.length !== null) {
      this.state = LENGTH;
      this.remaining = this.length;
    } else {
      this.state = UNTIL_CLOSE;
      this.keepAlive = false;
    }
    return null;
  }

  private startChunkSize(): void {
    this.state = CHUNK_SIZE;
    this.sizePhase = 0;
    this.sizeDigits = 0;
    this.sizeLineBytes = 0;
    this.remaining = 0;
  }

  /** A chunk-size line, byte by byte (it may span network chunks): hex digits, optional `;extension`, CRLF. */
  private chunkSize(buf: Buffer, pos: number): number {
    for (; pos < buf.length; pos++) {
      const b = buf[pos]!;
      if (++this.sizeLineBytes > MAX_CHUNK_LINE) {
        this.malformed('a chunk-size line is too long');
        return buf.length;
      }
      if (this.sizePhase === 0) {
        const v = HEX[b]!;
        if (v !== 255 && this.sizeDigits < 12) {
          this.sizeDigits++;
          this.remaining = this.remaining * 16 + v;
          continue;
        }
        if (this.sizeDigits === 0 || v !== 255) break;
        this.sizePhase = 1;
      }
      if (this.sizePhase === 3) {
        if (b !== LF) break;
        if (this.remaining === 0) {
          this.state = TRAILERS;
          this.pending = null;
        } else this.state = CHUNK_DATA;
        return pos + 1;
      }
      if (b === CR) this.sizePhase = 3;
      else if (this.sizePhase === 1 && b === 0x3b) this.sizePhase = 2;
      else if (this.sizePhase === 1 ? b !== 0x20 && b !== 0x09 : isCtl(b)) break;
    }
    if (pos < buf.length) {
      this.malformed('bad chunk-size line (chunked framing broken)');
      return buf.length;
    }
    return pos;
  }

  /** The trailer section after the last chunk: an empty line, or fields then an empty line (checked, not used). */
  private trailers(buf: Buffer, pos: number): number {
    // The common case: no trailers, the final CRLF in this network chunk.
    if (this.pending === null && buf[pos] === CR && buf[pos + 1] === LF) {
      this.done(buf, pos + 2);
      return pos + 2;
    }
    let bytes = buf.subarray(pos);
    const before = this.pending?.length ?? 0;
    if (before > 0) bytes = Buffer.concat([this.pending!, bytes]);
    let end = -1;
    if (bytes[0] === CR) {
      if (bytes.length < 2) {
        this.pending = keep(bytes, before > 0);
        return buf.length;
      }
      if (bytes[1] !== LF) {
        this.malformed('a chunked trailer line does not end in CRLF');
        return buf.length;
      }
      end = 0;
    } else {
      const at = bytes.indexOf(CRLFCRLF);
      if (at >= 0) {
        const why = scanFields(bytes, 0, at + 2, null);
        if (why !== null) {
          this.malformed(`chunked trailer ${why}`);
          return buf.length;
        }
        end = at + 2;
      }
    }
    if (end < 0 || end > MAX_HEAD_BYTES) {
      if (end >= 0 || bytes.length > MAX_HEAD_BYTES) {
        this.malformed(`chunked trailers larger than ${MAX_HEAD_BYTES} bytes`);
        return buf.length;
      }
      this.pending = keep(bytes, before > 0);
      return buf.length;
    }
    this.pending = null;
    const next = pos + end + 2 - before;
    this.done(buf, next);
    return next;
  }
}
