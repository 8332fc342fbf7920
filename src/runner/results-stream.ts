import { closeSync } from 'node:fs';
import { JoulebenchError } from '../core/errors.js';
import { LineChunks, openRegularFile } from '../read-text.js';
import { ResultsLineParser, type ResultsFileContents, type ResultsLineHandlers } from './results-file.js';

/** Where a streamed results file ended (a torn last line is not parsed). */
export type ResultsStreamEnd = Pick<ResultsFileContents, 'good_bytes' | 'torn_bytes'>;

/**
 * Reads a results JSONL line by line, handing each record to `on`: memory stays at one 64 KiB buffer plus
 * the longest line. The guards of readTextFile and the line rules of readResultsFile; a torn last line is not parsed.
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
interface ResultLineSink {
  /** `buf[start, end)`: complete lines (1-based `firstLine` at file byte `offset`), valid only during the call. */
  region(buf: Buffer, start: number, end: number, firstLine: number, offset: number): void;
}

/** The reading half of {@link streamResultsFile}: complete lines as checked bytes, a chunk at a time. */
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

