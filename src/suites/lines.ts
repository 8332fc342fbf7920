import { closeSync, fstatSync } from 'node:fs';
import { JoulebenchError, type ErrorCode } from '../core/errors.js';
import { LineChunks, openRegularFile } from '../read-text.js';

/** What a line reader saw of the file when it opened it: a later pass compares, to notice a changed file. */
export interface FileStamp {
  size: number;
  mtime_ns: bigint;
  ino: number;
}

/**
 * The lines of a UTF-8 text file, one at a time, with their 1-based numbers (`text.split('\n')`'s:
 * blank lines counted, the last line yielded even without a newline): memory stays at one 64 KiB read
 * buffer plus the longest line, whatever the file's size. The guards are readTextFile's (regular files
 * only, the input size limit, UTF-8 with the byte offset of the first bad sequence, a leading BOM
 * skipped), with its messages. The file is closed when the loop over the lines ends, however it ends.
 */
export function* fileLines(
  path: string,
  opts: {
    code: ErrorCode;
    /** How messages name the file. */
    where: string;
    /** Appended to the "no such file" message. */
    suffix?: string;
    /** Called with the file's size, mtime and inode once it is open, before a byte is read. */
    onOpen?: (stamp: FileStamp) => void;
    chunkBytes?: number;
    /**
     * A results file: bytes after the last newline are a line torn by a kill, neither decoded nor
     * yielded; `onEnd` gets the byte counts. Each line then carries its byte offset and length.
     */
    torn?: { onEnd: (end: { good_bytes: number; torn_bytes: number }) => void };
  },
): Generator<{ line: string; n: number; offset: number; bytes: number }, void, undefined> {
  const { fd, c } = openChunks(path, opts);
  let n = 0;
  try {
    for (;;) {
      const eof = c.fill() === 0;
      // Every complete line read so far is validated and decoded at once (per chunk, not per line);
      // at the end of the file, the rest is the last line.
      if (eof && opts.torn) {
        opts.torn.onEnd({ good_bytes: c.base + c.start, torn_bytes: c.end - c.start });
        return;
      }
      const last = eof ? c.end : c.buf.subarray(0, c.end).lastIndexOf(0x0a);
      if (!eof && last < c.scanFrom) continue;
      const s = c.checked(last);
      let offset = c.base + s;
      if (!eof || last > s) {
        for (const line of c.buf.toString('utf8', s, last).split('\n')) {
          // Byte lengths only where asked (results files, for the resume index).
          const bytes = opts.torn ? Buffer.byteLength(line) : 0;
          yield { line, n: ++n, offset, bytes };
          offset += bytes + 1;
        }
      }
      if (eof) return;
      c.start = last + 1;
    }
  } finally {
    closeSync(fd);
  }
}


/**
 * The text of a UTF-8 file a piece at a time: each piece ends just after a newline (the last one at
 * the end of the file), so joined they are exactly `readTextFile`'s text, and no piece splits a
 * character. The guards, messages and memory are {@link fileLines}'s; for readers that keep their own
 * state across lines (a CSV quoted field may span several; a JSON document is one text).
 */
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

/**
 * Opens a regular file for {@link fileLines} or {@link fileText} (their guards and messages), tells
 * `onOpen` its stamp, and gives the chunked reader over it; the caller closes `fd`.
 */
function openChunks(
  path: string,
  opts: { code: ErrorCode; where: string; onOpen?: (stamp: FileStamp) => void; chunkBytes?: number; suffix?: string },
): { fd: number; c: LineChunks } {
  const { code, where, onOpen } = opts;
  const fail = (why: string): never => {
    throw new JoulebenchError(code, `${where}: ${why}`);
  };
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
  return { fd, c: new LineChunks(fd, opts.chunkBytes ?? 1 << 16, fail) };
}
