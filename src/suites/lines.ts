import { closeSync, fstatSync } from 'node:fs';
import type { ErrorCode } from '../core/errors.js';
import { failWith, LineChunks, openRegularFile } from '../read-text.js';

/** What a line reader saw of the file when it opened it: a later pass compares, to notice a changed file. */
export interface FileStamp {
  size: number;
  mtime_ns: bigint;
  ino: number;
}

/** How {@link fileText} and {@link fileLines} read: readTextFile's error code, `where` and `suffix` (a missing file's hint). */
interface ReadOptions {
  code: ErrorCode;
  where: string;
  suffix?: string;
  /** Told the file's stamp once it is open. */
  onOpen?: (stamp: FileStamp) => void;
  chunkBytes?: number;
}

/**
 * The lines of a UTF-8 text file with their 1-based numbers (`text.split('\n')`'s), read as {@link fileText}'s
 * pieces; closed when the loop ends.
 */
export function* fileLines(path: string, opts: ReadOptions): Generator<{ line: string; n: number }, void, undefined> {
  let n = 0;
  for (const piece of fileText(path, opts)) {
    for (const line of (piece.endsWith('\n') ? piece.slice(0, -1) : piece).split('\n')) yield { line, n: ++n };
  }
}

/**
 * The text of a UTF-8 file in pieces that each end after a newline (joined: `readTextFile`'s text), in one
 * 64 KiB buffer plus the longest line, under readTextFile's guards and messages; closed when the loop ends.
 */
export function* fileText(path: string, opts: ReadOptions): Generator<string, void, undefined> {
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
function openChunks(path: string, opts: ReadOptions): { fd: number; c: LineChunks } {
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
