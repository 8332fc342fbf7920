import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { JoulebenchError, type ErrorCode } from './core/errors.js';

/** Size limits on files a user names, bytes: `config_bytes` for run configs (default 1 MiB), `input_bytes` for the rest (2 GiB). */
export interface InputLimits {
  input_bytes: number;
  config_bytes: number;
}

export const DEFAULT_INPUT_LIMITS: Readonly<InputLimits> = Object.freeze({ input_bytes: 2 * 1024 ** 3, config_bytes: 1024 ** 2 });

/** The environment variables the CLI reads the limits from. */
export const LIMIT_ENV: Readonly<Record<keyof InputLimits, string>> = Object.freeze({
  input_bytes: 'JOULEBENCH_MAX_INPUT_BYTES',
  config_bytes: 'JOULEBENCH_MAX_CONFIG_BYTES',
});

let limits: InputLimits = { ...DEFAULT_INPUT_LIMITS };

/** Sets the size limits for every later read (library callers and the CLI alike); returns the previous ones. */
export function setInputLimits(next: Partial<InputLimits>): InputLimits {
  const prev = limits;
  limits = { ...limits, ...next };
  return prev;
}

export function inputLimits(): Readonly<InputLimits> {
  return limits;
}

/** Which limit applies: `config` for run configs, `input` for everything else. */
type InputKind = 'input' | 'config';

/** `where`: how messages name the file (default: the path); `missing` replaces "no such file", `suffix` follows it. */
interface ReadTextOptions {
  where?: string;
  missing?: string;
  suffix?: string;
  kind?: InputKind;
}

/**
 * Reads a UTF-8 text file the user named, or throws one line with a code naming the file. A FIFO,
 * device, socket or directory is refused before a byte is read (never waited on), so is a file over
 * the size limit; bad UTF-8 is refused with the offset of the first bad sequence; a leading BOM is dropped.
 */
export function readTextFile(path: string, code: ErrorCode, opts: ReadTextOptions = {}): string {
  return readTextFileBom(path, code, opts).text;
}

/** {@link readTextFile}, saying also how many bytes the dropped byte-order mark took (3 or 0). */
export function readTextFileBom(path: string, code: ErrorCode, opts: ReadTextOptions = {}): { text: string; bom_bytes: number } {
  const fail = failWith(code, opts.where ?? path);
  const { fd, size } = openRegularFile(path, code, opts);
  let bytes: Buffer;
  try {
    const max = maxBytes(opts.kind ?? 'input');
    // Read up to one byte past the limit: a file that grows while it is read is still held to it.
    const buf = Buffer.allocUnsafe(Math.min(size, max) + 1);
    let n = 0;
    for (let got; n < buf.length && (got = readRetrying(fd, buf, n, fail)) > 0; ) n += got;
    if (n > max) return fail(tooLarge(n, max, opts.kind ?? 'input'));
    bytes = buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
  return { text: decodeUtf8(bytes, fail), bom_bytes: utf8BomLength(bytes) };
}

/** Throws `code` with `where: why`. */
export function failWith(code: ErrorCode, where: string): (why: string) => never {
  return (why) => {
    throw new JoulebenchError(code, `${where}: ${why}`);
  };
}

function maxBytes(kind: InputKind): number {
  return kind === 'config' ? limits.config_bytes : limits.input_bytes;
}

/** The length of a UTF-8 byte-order mark at the start of `b`: 3, or 0 when there is none. */
export function utf8BomLength(b: Uint8Array): number {
  return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
}

/** Opens `path` under {@link readTextFile}'s guards (a regular file within its size limit); the caller reads and closes the fd. */
export function openRegularFile(path: string, code: ErrorCode, opts: ReadTextOptions = {}): { fd: number; size: number } {
  const fail = failWith(code, opts.where ?? path);
  const fd = openChecked(path, fail, opts);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return fail(`is ${fileKind(st)}, not a regular file; joulebench reads only regular files`);
    const kind = opts.kind ?? 'input';
    const max = maxBytes(kind);
    if (st.size > max) return fail(tooLarge(st.size, max, kind));
    return { fd, size: st.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

function openChecked(path: string, fail: (why: string) => never, opts: ReadTextOptions): number {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return fail(`${opts.missing ?? 'no such file'}${opts.suffix ?? ''}`);
    if (err.code === 'ENXIO') {
      // A socket (or a FIFO/device with nobody behind it) cannot be opened at all.
      let st: Stats | null = null;
      try {
        st = statSync(path);
      } catch {
        // fall through with what open said
      }
      if (st && !st.isFile()) return fail(`is ${fileKind(st)}, not a regular file; joulebench reads only regular files`);
    }
    return fail(`cannot open (${err.code ?? err.message})`);
  }
  return fd;
}

function tooLarge(size: number, max: number, kind: InputKind): string {
  const what = kind === 'config' ? 'configs' : 'input files';
  return `${formatBytes(size)} is over the ${formatBytes(max)} limit for ${what} (raise it with ${LIMIT_ENV[kind === 'config' ? 'config_bytes' : 'input_bytes']}=BYTES)`;
}

/** The text of UTF-8 bytes without a leading BOM, refused with the offset of the first bad sequence. */
function decodeUtf8(bytes: Buffer, fail: (why: string) => never): string {
  if (!isUtf8(bytes)) {
    const at = firstInvalidUtf8(bytes);
    return fail(`not valid UTF-8 (first bad byte sequence at byte offset ${at}); save the file as UTF-8`);
  }
  const start = utf8BomLength(bytes);
  try {
    return bytes.toString('utf8', start);
  } catch {
    // V8 holds at most ~512 MiB of text in one string.
    return fail(`${formatBytes(bytes.length)} of text is more than Node.js can hold as one string; split the file`);
  }
}

/** The byte offset of the first sequence that is not well-formed UTF-8 (RFC 3629), or -1 when the bytes are valid. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let len: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + len > n) return i;
    const c1 = b[i + 1]!;
    if (c1 < lo || c1 > hi) return i;
    for (let k = 2; k < len; k++) {
      const ck = b[i + k]!;
      if (ck < 0x80 || ck > 0xbf) return i;
    }
    i += len;
  }
  return -1;
}

/** What a path that is not a regular file is, for a one-line refusal (`a FIFO (named pipe)`, …). */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** `1 MiB`, `2 GiB`, `1536 bytes`: exact binary units where they divide, else bytes. */
function formatBytes(n: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} bytes`;
}

/** Parses a size limit: whole bytes, or a number with KiB/MiB/GiB (also K/M/G); `null` when it is not one. */
export function parseByteSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(|b|bytes?|k|kib|m|mib|g|gib)\s*$/i.exec(text);
  if (!m) return null;
  const unit = m[2]!.toLowerCase();
  const mult = unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 ** 2 : unit.startsWith('g') ? 1024 ** 3 : 1;
  const n = Math.floor(Number(m[1]) * mult);
  return Number.isSafeInteger(n) && n >= 1 ? n : null;
}

/** One `readSync` into `buf` from `at`, retried on EAGAIN (a non-blocking descriptor); any other error goes to `fail`. */
function readRetrying(fd: number, buf: Buffer, at: number, fail: (why: string) => never): number {
  for (;;) {
    try {
      return readSync(fd, buf, at, buf.length - at, null);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'EAGAIN') continue;
      return fail(`cannot read (${err.code ?? err.message})`);
    }
  }
}

/**
 * A file read a chunk at a time for the line readers: the incomplete line is kept at the front of the
 * buffer, a longer line grows it. `buf[start..end)` is read and not yet consumed; `base` is `buf[0]`'s offset.
 */
export class LineChunks {
  buf: Buffer;
  base = 0;
  start = 0;
  end = 0;
  /** Where the bytes of the latest read begin in `buf` (a newline before it was already seen). */
  scanFrom = 0;
  private readonly max = inputLimits().input_bytes;

  constructor(
    private readonly fd: number,
    chunkBytes: number,
    private readonly fail: (why: string) => never,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(16, chunkBytes));
  }

  /** Reads more bytes after those held; how many (0 at the end of the file). */
  fill(): number {
    if (this.end === this.buf.length) {
      if (this.start > 0) {
        this.buf.copy(this.buf, 0, this.start, this.end);
        this.base += this.start;
        this.end -= this.start;
        this.start = 0;
      } else {
        // One line longer than the buffer: grow it (bounded by the size limit below).
        const bigger = Buffer.allocUnsafe(this.buf.length * 2);
        this.buf.copy(bigger, 0, 0, this.end);
        this.buf = bigger;
      }
    }
    const got = readRetrying(this.fd, this.buf, this.end, this.fail);
    this.scanFrom = this.end;
    this.end += got;
    if (this.base + this.end > this.max) {
      this.fail(`grew past the ${this.max}-byte limit for input files while being read (raise it with JOULEBENCH_MAX_INPUT_BYTES=BYTES)`);
    }
    return got;
  }

  /** Checks the held bytes up to `last` (exclusive) as UTF-8 and returns where they begin (after a leading BOM). */
  checked(last: number): number {
    const { buf } = this;
    let s = this.start;
    if (this.base + s === 0) s = utf8BomLength(buf.subarray(0, last));
    const region = buf.subarray(s, last);
    if (!isUtf8(region)) this.fail(`not valid UTF-8 (first bad byte sequence at byte offset ${this.base + s + firstInvalidUtf8(region)}); save the file as UTF-8`);
    return s;
  }
}
