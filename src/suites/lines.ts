import { isUtf8 } from 'node:buffer';
import { closeSync, fstatSync } from 'node:fs';
import { JoulebenchError, type ErrorCode } from '../core/errors.js';
import { firstInvalidUtf8, inputLimits, openRegularFile, readRetrying, roomToRead } from '../read-text.js';

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
  const { code, where, onOpen } = opts;
  const fail = (why: string): never => {
    throw new JoulebenchError(code, `${where}: ${why}`);
  };
  const { fd } = openRegularFile(path, code, { where, ...(opts.suffix !== undefined ? { suffix: opts.suffix } : {}) });
  const max = inputLimits().input_bytes;
  let buf = Buffer.allocUnsafe(Math.max(16, opts.chunkBytes ?? 1 << 16));
  let base = 0; // file offset of buf[0]
  let start = 0; // first byte of the line not yet complete
  let end = 0; // end of the bytes read into buf
  let n = 0;
  try {
    if (onOpen) {
      const st = fstatSync(fd, { bigint: true });
      onOpen({ size: Number(st.size), mtime_ns: st.mtimeNs, ino: Number(st.ino) });
    }
    for (;;) {
      if (end === buf.length) {
        const room = roomToRead(buf, start, end);
        buf = room.buf;
        base += room.shift;
        end -= room.shift;
        start = 0;
      }
      const got = readRetrying(fd, buf, end, fail);
      const eof = got === 0;
      const scanFrom = end;
      end += got;
      if (base + end > max) fail(`grew past the ${max}-byte limit for input files while being read (raise it with JOULEBENCH_MAX_INPUT_BYTES=BYTES)`);
      // Every complete line read so far is validated and decoded at once (per chunk, not per line);
      // at the end of the file, the rest is the last line.
      if (eof && opts.torn) {
        opts.torn.onEnd({ good_bytes: base + start, torn_bytes: end - start });
        return;
      }
      const last = eof ? end : buf.subarray(0, end).lastIndexOf(0x0a);
      if (!eof && last < scanFrom) continue;
      let s = start;
      if (base + s === 0 && last >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) s = 3;
      const region = buf.subarray(s, last);
      if (!isUtf8(region)) fail(`not valid UTF-8 (first bad byte sequence at byte offset ${base + s + firstInvalidUtf8(region)}); save the file as UTF-8`);
      let offset = base + s;
      if (!eof || region.length > 0) {
        for (const line of region.toString('utf8').split('\n')) {
          // Byte lengths only where asked (results files, for the resume index).
          const bytes = opts.torn ? Buffer.byteLength(line) : 0;
          yield { line, n: ++n, offset, bytes };
          offset += bytes + 1;
        }
      }
      if (eof) return;
      start = last + 1;
    }
  } finally {
    closeSync(fd);
  }
}

