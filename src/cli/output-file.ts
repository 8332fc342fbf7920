import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { JoulebenchError } from '../core/errors.js';
import { checkWritePath } from '../write-path.js';

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

/** The format an output path names: JSON without an extension; an extension we do not write is refused. */
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

/** Refuses an output path that is a folder, FIFO, socket, device (but `/dev/null`) or under /proc or /sys, naming the flag. */
export const checkOutputPath = checkWritePath;

/** Writes an output file (folder created); checked again first, since opening a FIFO would wait for a reader forever. */
export function writeOutputFile(path: string, content: string | Uint8Array | StreamedOutput, flag = '--out'): void {
  const target = checkOutputPath(path, flag);
  try {
    if (target.regular) mkdirSync(dirname(resolve(path)), { recursive: true });
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
function outputError(path: string, e: unknown, flag = '--out'): JoulebenchError {
  const code = (e as NodeJS.ErrnoException)?.code ?? '';
  const reason = REASONS[code] ?? ((e as Error)?.message ?? String(e)).split('\n')[0];
  return new JoulebenchError('E_OUTPUT', `${flag} ${path}: cannot write: ${reason}${code ? ` (${code})` : ''}`);
}

const WRITE_SYSCALLS = new Set(['open', 'write', 'mkdir', 'rename', 'close', 'fsync', 'ftruncate', 'copyfile', 'link', 'symlink', 'unlink']);

/** The one line for a raw file-system write error (disk full, read-only, permission), or null for anything else. */
export function fsWriteErrorLine(e: unknown): string | null {
  const err = e as NodeJS.ErrnoException | null;
  if (!err || typeof err !== 'object' || typeof err.code !== 'string' || !(err.code in REASONS)) return null;
  if (err.syscall !== undefined && !WRITE_SYSCALLS.has(err.syscall)) return null;
  return `cannot write ${err.path ?? 'a file'}: ${REASONS[err.code]} (${err.code})`;
}
