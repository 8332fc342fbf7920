import { isUtf8 } from 'node:buffer';
import { closeSync } from 'node:fs';
import { JoulebenchError } from '../core/errors.js';
import { firstInvalidUtf8, inputLimits, openRegularFile, readRetrying, roomToRead } from '../read-text.js';
import { ResultsLineParser, type ResultsLineHandlers } from './results-file.js';

/** Where a streamed results file ended: as `ResultsFileContents`' byte counts. */
export interface ResultsStreamEnd {
  /** Bytes up to and including the last complete line. */
  good_bytes: number;
  /** Bytes after the last newline (a line torn by a kill); not parsed. */
  torn_bytes: number;
}

/**
 * Reads a results JSONL line by line, handing each record to `on` as it is parsed: memory stays at one
 * read buffer (64 KiB: a 1 MiB one measured ~30 MB more peak RSS, the lines of a chunk outliving a
 * scavenge) plus the longest line, whatever the file's size (`report`, `compare` and `--resume` on a
 * million-case run). Same guards as readTextFile (regular files only, the input size limit, UTF-8 with
 * the byte offset of the first bad sequence, a leading BOM skipped) and the same line rules and messages
 * as readResultsFile (ResultsLineParser). A torn last line is not parsed, so a kill mid-character is
 * not called bad UTF-8.
 */
export function streamResultsFile(path: string, on: ResultsLineHandlers, chunkBytes = 1 << 16): ResultsStreamEnd {
  const parser = new ResultsLineParser(path, on);
  return streamResultLines(
    path,
    {
      // Every complete line of a chunk is decoded and split at once (one native call per chunk, not one per line).
      region: (buf, start, end, firstLine) => {
        let n = firstLine;
        for (const line of buf.toString('utf8', start, end).split('\n')) parser.line(line, n++);
      },
    },
    chunkBytes,
  );
}

/** What {@link streamResultLines} hands over: the bytes of complete lines, already checked as UTF-8. */
export interface ResultLineSink {
  /**
   * `buf[start, end)`: one or more complete lines joined by `\n` (the last one's newline left out), the
   * first numbered `firstLine` (1-based) and starting at byte `offset` of the file. The bytes are only
   * valid during the call (the buffer is reused).
   */
  region(buf: Buffer, start: number, end: number, firstLine: number, offset: number): void;
}

/**
 * The reading half of {@link streamResultsFile}: the file's complete lines as bytes, a chunk at a time,
 * under the same guards (regular file, size limit, UTF-8 checked per chunk with the byte offset of the
 * first bad sequence, a BOM skipped, a torn last line left unread). For readers that scan bytes (the
 * report rebuild, src/report/rebuild.ts) or need each line's file offset.
 */
export function streamResultLines(path: string, sink: ResultLineSink, chunkBytes = 1 << 16): ResultsStreamEnd {
  const fail = (why: string): never => {
    throw new JoulebenchError('E_RESULTS', `${path}: ${why}`);
  };
  const { fd } = openRegularFile(path, 'E_RESULTS');
  const max = inputLimits().input_bytes;
  let buf = Buffer.allocUnsafe(Math.max(16, chunkBytes));
  let base = 0; // file offset of buf[0]
  let start = 0; // first byte of the line not yet complete
  let end = 0; // end of the bytes read into buf
  let lineNo = 1;
  try {
    for (;;) {
      if (end === buf.length) {
        const room = roomToRead(buf, start, end);
        buf = room.buf;
        base += room.shift;
        end -= room.shift;
        start = 0;
      }
      const got = readRetrying(fd, buf, end, fail);
      if (got === 0) break;
      const scanFrom = end;
      end += got;
      if (base + end > max) fail(`grew past the ${max}-byte limit for input files while being read (raise it with JOULEBENCH_MAX_INPUT_BYTES=BYTES)`);
      // Every complete line read so far is validated at once (per chunk, not per line).
      const last = buf.subarray(0, end).lastIndexOf(0x0a);
      if (last < scanFrom) continue;
      let s = start;
      if (base + s === 0 && last >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) s = 3;
      const region = buf.subarray(s, last);
      if (!isUtf8(region)) fail(`not valid UTF-8 (first bad byte sequence at byte offset ${base + s + firstInvalidUtf8(region)}); save the file as UTF-8`);
      sink.region(buf, s, last, lineNo, base + s);
      for (let i = buf.indexOf(0x0a, s); i >= 0 && i <= last; i = buf.indexOf(0x0a, i + 1)) lineNo++;
      start = last + 1;
    }
  } finally {
    closeSync(fd);
  }
  return { good_bytes: base + start, torn_bytes: end - start };
}

