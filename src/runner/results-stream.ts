import { closeSync } from 'node:fs';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import { LineChunks, openRegularFile } from '../read-text.js';
import { checkCaseLine } from './case-check.js';
import { caseLimits, NO_LIMITS, outsideRunReason, phaseRank, withinRun, type CaseLimits } from './case-key.js';
import { CaseLines } from './case-lines.js';

/** A results JSONL as read back: its header, its case lines, and what a crash left behind. */
export interface ResultsFileContents {
  header: ResultsHeader | null;
  /** `record: "case"` lines in file order (warmup and scored). */
  results: CaseResult[];
  /** Bytes up to and including the last complete line. */
  good_bytes: number;
  /** Bytes after the last newline: a line torn by a kill (SIGKILL mid-write); dropped. */
  torn_bytes: number;
  /** Lines of other record kinds (e.g. `resume`, `rewarm`), kept for the receipt. */
  other: Record<string, unknown>[];
}

/**
 * Reads a results JSONL, streamed (any size of file). A torn last line (no trailing newline: the process
 * died mid-write) is dropped; a bad line anywhere else is E_RESULTS naming the file and line, because that
 * is not a crash artefact.
 */
export function readResultsFile(path: string): ResultsFileContents {
  const out: ResultsFileContents = { header: null, results: [], good_bytes: 0, torn_bytes: 0, other: [] };
  const end = streamResultsFile(path, { header: (h) => (out.header = h), case: (r) => out.results.push(r), other: (o) => out.other.push(o) });
  return Object.assign(out, end);
}

/** The rules of {@link readResultsFile} over text already in memory. */
export function parseResultsText(text: string, path: string): ResultsFileContents {
  const end = text.lastIndexOf('\n') + 1;
  const complete = text.slice(0, end);
  const out: ResultsFileContents = {
    header: null,
    results: [],
    good_bytes: Buffer.byteLength(complete),
    torn_bytes: Buffer.byteLength(text) - Buffer.byteLength(complete),
    other: [],
  };
  const lines = complete.split('\n');
  lines.pop(); // the empty string after the final newline
  const parser = new ResultsLineParser(path, {
    header: (h) => (out.header = h),
    case: (r) => out.results.push(r),
    other: (o) => out.other.push(o),
  });
  lines.forEach((line, i) => parser.line(line, i + 1));
  return out;
}

/** What {@link ResultsLineParser} found on a line. */
export interface ResultsLineHandlers {
  header(h: ResultsHeader): void;
  case(r: CaseResult): void;
  other(o: Record<string, unknown>): void;
}

/** The rules for one results line, shared by every reader of a results file; a key on two lines is refused. */
export class ResultsLineParser {
  private header: ResultsHeader | null = null;
  /** The passes and cases the header allows (see {@link caseLimits}). */
  private limits: CaseLimits = NO_LIMITS;
  private readonly keys = new CaseLines();
  constructor(
    private readonly path: string,
    private readonly on: ResultsLineHandlers,
  ) {}

  /** `n`: the 1-based line number. */
  line(line: string, n: number): void {
    const path = this.path;
    if (line.trim() === '') return;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      throw new JoulebenchError('E_RESULTS', `${path}: line ${n}: not valid JSON (${(e as Error).message})`);
    }
    const rec = (obj as { record?: unknown } | null)?.record;
    if (rec === 'header') {
      if (n !== 1 && this.header === null) throw new JoulebenchError('E_RESULTS', `${path}: line ${n}: header is not the first line`);
      if (this.header === null) {
        this.header = obj as ResultsHeader;
        this.limits = caseLimits(this.header);
        this.on.header(this.header);
      } else checkSameHeader(this.header, obj as ResultsHeader, path, n);
    } else if (rec === 'case') {
      if (this.header === null) throw new JoulebenchError('E_RESULTS', `${path}: line ${n}: a case line before the header`);
      const r = obj as CaseResult;
      if ((r.phase !== 'warmup' && r.phase !== 'scored') || !Number.isInteger(r.pass) || !Number.isInteger(r.index)) {
        throw new JoulebenchError('E_RESULTS', `${path}: line ${n}: case line without phase, pass and index`);
      }
      checkCaseLine(r as unknown as Record<string, unknown>, path, n);
      if (!withinRun(r, this.limits)) throw new JoulebenchError('E_RESULTS', outsideRunReason(path, n, r, this.limits));
      // A load run's conversation writes a line a turn, each with the case's pass and index.
      const t = (r.meta?.load as { turn?: unknown } | undefined)?.turn;
      const turn = typeof t === 'number' && Number.isInteger(t) && t > 1 ? t : 1;
      const first = this.keys.add(phaseRank(r.phase), r.pass, r.index, n, turn);
      if (first !== 0) {
        throw new JoulebenchError(
          'E_RESULTS',
          `${path}:${first} and ${path}:${n}: two case lines for ${r.phase} pass ${r.pass} index ${r.index}${turn > 1 ? ` turn ${turn}` : ''}; joulebench writes each case once (files joined or edited?): keep one of them`,
        );
      }
      this.on.case(r);
    } else if (typeof rec === 'string') {
      this.on.other(obj as Record<string, unknown>);
    } else {
      throw new JoulebenchError('E_RESULTS', `${path}: line ${n}: not a joulebench results line (record is missing)`);
    }
  }
}

function checkSameHeader(a: ResultsHeader, b: ResultsHeader, path: string, line: number): void {
  if (a.suite_digest !== b.suite_digest || a.config_digest !== b.config_digest) {
    throw new JoulebenchError('E_RESULTS', `${path}: line ${line}: a second header with different digests`);
  }
}


/** Where a streamed results file ended (a torn last line is not parsed). */
export type ResultsStreamEnd = Pick<ResultsFileContents, 'good_bytes' | 'torn_bytes'>;

/**
 * Reads a results JSONL line by line, handing each record to `on`: memory stays at one 64 KiB buffer plus
 * the longest line. The guards of readTextFile and the line rules of {@link ResultsLineParser}; a torn last line is not parsed.
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

