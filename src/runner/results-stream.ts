import { closeSync } from 'node:fs';
import { JoulebenchError } from '../core/errors.js';
import { LineChunks, openRegularFile } from '../read-text.js';
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
  const c = new LineChunks(fd, chunkBytes, fail);
  let lineNo = 1;
  try {
    for (;;) {
      if (c.fill() === 0) break;
      // Every complete line read so far is validated at once (per chunk, not per line).
      const last = c.buf.subarray(0, c.end).lastIndexOf(0x0a);
      if (last < c.scanFrom) continue;
      const s = c.checked(last);
      sink.region(c.buf, s, last, lineNo, c.base + s);
      for (let i = c.buf.indexOf(0x0a, s); i >= 0 && i <= last; i = c.buf.indexOf(0x0a, i + 1)) lineNo++;
      c.start = last + 1;
    }
  } finally {
    closeSync(fd);
  }
  return { good_bytes: c.base + c.start, torn_bytes: c.end - c.start };
}

