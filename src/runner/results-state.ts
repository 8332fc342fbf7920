import { ResultsLineParser, streamResultLines } from './results-stream.js';

/** What a results file holds, as far as starting a new run over it is concerned. */
interface ResultsFileState {
  /** Case lines (warmup and scored). */
  cases: number;
  /** Whether an `end` record says the run finished. */
  ended: boolean;
}

// How every case line starts (caseLine writes `record` first).
const CASE_PREFIX = Buffer.from('{"record":"case",');

/**
 * Counts a results file's case lines and finds its `end` record, streaming. The header and every line
 * that is not a case line go through ResultsLineParser (its rules and messages: a file that is not a
 * results file throws); a case line is only recognised by how caseLine starts it, not parsed: a
 * million-case file was JSON-parsed line by line (~4 s) before a new run could start over it.
 */
export function resultsFileState(path: string): ResultsFileState {
  let cases = 0;
  let ended = false;
  let header = false;
  const parser = new ResultsLineParser(path, {
    header: () => void (header = true),
    case: () => void cases++,
    other: (o) => void (ended ||= o.record === 'end'),
  });
  const P = CASE_PREFIX.length;
  streamResultLines(path, {
    region: (buf, start, end, firstLine) => {
      let n = firstLine;
      for (let s = start; s <= end; n++) {
        let nl = buf.indexOf(0x0a, s);
        if (nl < 0 || nl > end) nl = end;
        let isCase = header && nl - s > P;
        for (let i = 0; isCase && i < P; i++) if (buf[s + i] !== CASE_PREFIX[i]) isCase = false;
        if (isCase) cases++;
        else parser.line(buf.toString('utf8', s, nl), n);
        s = nl + 1;
      }
    },
  });
  return { cases, ended };
}
