import { closeSync, fstatSync } from 'node:fs';
import type { ErrorCode } from '../core/errors.js';
import { failWith, LineChunks, openRegularFile } from '../read-text.js';

/** What a line reader saw of the file when it opened it: a later pass compares, to notice a changed file. */
export interface FileStamp {
  size: number;
  mtime_ns: bigint;
  ino: number;
}

/**
 * The lines of a UTF-8 text file with their 1-based numbers (`text.split('\n')`'s), in one 64 KiB buffer
 * plus the longest line, under readTextFile's guards and messages; closed when the loop ends.
 */
export function* fileLines(
  path: string,
  opts: {
    code: ErrorCode;
    where: string;
    suffix?: string;
    onOpen?: (stamp: FileStamp) => void;
    chunkBytes?: number;
  },
): Generator<{ line: string; n: number }, void, undefined> {
  const { fd, c } = openChunks(path, opts);
  let n = 0;
  try {
    for (;;) {
      const eof = c.fill() === 0;
      const last = eof ? c.end : c.buf.subarray(0, c.end).lastIndexOf(0x0a);
      if (!eof && last < c.scanFrom) continue;
      const s = c.checked(last);
      if (!eof || last > s) for (const line of c.buf.toString('utf8', s, last).split('\n')) yield { line, n: ++n };
      if (eof) return;
      c.start = last + 1;
    }
  } finally {
    closeSync(fd);
  }
}

/** The text of a UTF-8 file in pieces that each end after a newline (joined: `readTextFile`'s text), under {@link fileLines}' guards. */
export function* fileText(
  path: string,
  opts: { code: ErrorCode; where: string; onOpen?: (stamp: FileStamp) => void; chunkBytes?: number },
): Generator<string, void, undefined> {
  const { fd, c } = openChunks(path, opts);
  try {
    for (;;) {
      const eof = c.fill() === 0;
      const last = eof ? c.end : c.buf.subarray(0, c.end).lastIndexOf(0x0a) + 1;
      if (!eof && last <= c.scanFrom) continue;
      const s = c.checked(last);
      if (last > s) yield c.buf.toString('utf8', s, last);
      if (eof) return;
      c.start = last;
    }
  } finally {
    closeSync(fd);
  }
}

/** Opens a file for {@link fileLines} or {@link fileText}, tells `onOpen` its stamp; the caller closes `fd`. */
function openChunks(
  path: string,
  opts: { code: ErrorCode; where: string; onOpen?: (stamp: FileStamp) => void; chunkBytes?: number; suffix?: string },
): { fd: number; c: LineChunks } {
  const { code, where, onOpen } = opts;
  const { fd } = openRegularFile(path, code, { where, ...(opts.suffix !== undefined ? { suffix: opts.suffix } : {}) });
  try {
    if (onOpen) {
      const st = fstatSync(fd, { bigint: true });
      onOpen({ size: Number(st.size), mtime_ns: st.mtimeNs, ino: Number(st.ino) });
    }
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return { fd, c: new LineChunks(fd, opts.chunkBytes ?? 1 << 16, failWith(code, where)) };
}
