import { closeSync, constants, mkdirSync, openSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, extname, isAbsolute, resolve, sep } from 'node:path';
import { JoulebenchError } from '../core/errors.js';

/** Output produced a piece at a time (a million per-case rows), never held as one string. */
export interface StreamedOutput {
  stream(write: (text: string) => void): void;
}

/** Writes every byte of `bytes`; a file that accepts nothing, again and again, is not going to take the rest. */
function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  let stalls = 0;
  while (off < bytes.length) {
    const n = writeSync(fd, bytes, off, bytes.length - off);
    if (n === 0 && ++stalls > 3) throw Object.assign(new Error('the file accepts no more bytes'), { code: 'ENOSPC' });
    off += n;
  }
}

/** The formats `-o FILE` can write, chosen by the file's extension (as promptfoo does). */
export type OutputFormat = 'json' | 'md' | 'html' | 'csv' | 'jsonl' | 'txt';

const BY_EXTENSION: Record<string, OutputFormat> = {
  '.json': 'json',
  '.md': 'md',
  '.markdown': 'md',
  '.html': 'html',
  '.htm': 'html',
  '.csv': 'csv',
  '.jsonl': 'jsonl',
  '.txt': 'txt',
};

/**
 * The format an output path names. A path without an extension (`/dev/null`, `report`) is JSON, as
 * `-o` always wrote; an extension we do not write is refused (exit 2) before anything runs.
 */
export function formatOf(path: string, allowed: readonly OutputFormat[]): OutputFormat {
  const ext = extname(path).toLowerCase();
  const format = ext === '' ? 'json' : BY_EXTENSION[ext];
  if (format === undefined || !allowed.includes(format)) {
    throw new JoulebenchError(
      'E_USAGE',
      `${path}: cannot write "${ext}" here; the extension picks the format: ${allowed.map((f) => `.${f}`).join(', ')}`,
    );
  }
  return format;
}

/** What is at an output path before anything is written. */
export interface OutputTarget {
  path: string;
  /** False for a device, a FIFO or a socket (`/dev/null`, `/dev/stdout`): no side files go beside it. */
  regular: boolean;
}

/** Kernel pseudo-filesystems: a write there is never a report (and `/proc` files can swallow a write forever). */
const PSEUDO_ROOTS = ['/proc', '/sys'];

/**
 * Checks an output path before a run spends anything: a folder, a path under `/proc` or `/sys`, or a
 * folder that cannot be made is one line (exit 2). A missing file is fine (it is created).
 */
export function checkOutputPath(path: string, flag = '--out'): OutputTarget {
  const abs = resolve(path);
  const real = realOrNearest(abs);
  if (PSEUDO_ROOTS.some((root) => real === root || real.startsWith(root + sep))) {
    throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: refusing to write under ${real.split(sep).slice(0, 2).join(sep)} (a kernel file system, not a report file)`);
  }
  let st;
  try {
    st = statSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { path, regular: true };
    throw outputError(path, e, flag);
  }
  if (st.isDirectory()) throw new JoulebenchError('E_OUTPUT', `${flag} ${path}: is a directory; name a file inside it`);
  return { path, regular: st.isFile() };
}

/**
 * Writes an output file: its folder is created, and a write that fails (read-only, disk full, a FIFO
 * with no reader) is one line naming the path and the reason, exit 2. A FIFO is opened without
 * blocking first, so a pipe nobody reads is an error rather than a hang.
 */
export function writeOutputFile(path: string, content: string | Uint8Array | StreamedOutput, flag = '--out'): void {
  const target = checkOutputPath(path, flag);
  try {
    if (target.regular) mkdirSync(dirname(resolve(path)), { recursive: true });
    else probeReader(path);
    // Streamed text goes to a file beside a regular output first, renamed into place once it is whole:
    // a failure half-way leaves the output as it was, not half a file.
    const streamed = typeof content === 'object' && !(content instanceof Uint8Array);
    const partial = streamed && target.regular ? `${path}.partial-${process.pid}` : path;
    const fd = openSync(partial, 'w');
    try {
      if (streamed) {
        let pending = '';
        content.stream((text) => {
          pending += text;
          if (pending.length >= 1 << 20) {
            writeAll(fd, Buffer.from(pending));
            pending = '';
          }
        });
        writeAll(fd, Buffer.from(pending));
      } else writeAll(fd, typeof content === 'string' ? Buffer.from(content) : content);
      closeSync(fd);
      if (partial !== path) renameSync(partial, path);
    } catch (e) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
      if (partial !== path) rmSync(partial, { force: true });
      throw e;
    }
  } catch (e) {
    if (e instanceof JoulebenchError) throw e;
    throw outputError(path, e, flag);
  }
}

/** A FIFO with no reader would block `open` forever; non-blocking open says ENXIO instead. */
function probeReader(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch {
    return;
  }
  if (!st.isFIFO()) return;
  const fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  closeSync(fd);
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EISDIR: 'is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ENXIO: 'a pipe with no reader',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links',
  EIO: 'input/output error',
};

/** The one-line error for a failed write: the path, the flag and the reason (never a stack). */
export function outputError(path: string, e: unknown, flag = '--out'): JoulebenchError {
  const code = (e as NodeJS.ErrnoException)?.code ?? '';
  const reason = REASONS[code] ?? ((e as Error)?.message ?? String(e)).split('\n')[0];
  return new JoulebenchError('E_OUTPUT', `${flag} ${path}: cannot write: ${reason}${code ? ` (${code})` : ''}`);
}

/** The real path of `abs`, or of its nearest existing ancestor joined with the rest. */
function realOrNearest(abs: string): string {
  let dir = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(dir);
      return rest.length ? resolve(real, ...rest.reverse()) : real;
    } catch {
      const parent = dirname(dir);
      if (parent === dir || !isAbsolute(parent)) return abs;
      rest.push(dir.slice(parent.length).replace(/^\/+/, ''));
      dir = parent;
    }
  }
}

const WRITE_SYSCALLS = new Set(['open', 'write', 'mkdir', 'rename', 'close', 'fsync', 'ftruncate', 'copyfile', 'link', 'symlink', 'unlink']);

/**
 * A file-system error from writing (disk full, read-only, permission) that escaped a command as a raw
 * Node error: the one line to print for it, or null when `e` is something else.
 */
export function fsWriteErrorLine(e: unknown): string | null {
  const err = e as NodeJS.ErrnoException | null;
  if (!err || typeof err !== 'object' || typeof err.code !== 'string' || !(err.code in REASONS)) return null;
  if (err.syscall !== undefined && !WRITE_SYSCALLS.has(err.syscall)) return null;
  return `cannot write ${err.path ?? 'a file'}: ${REASONS[err.code]} (${err.code})`;
}
