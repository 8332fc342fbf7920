import { closeSync, openSync, readSync } from 'node:fs';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, Phase, ResultsHeader } from '../core/types.js';
import { pastSuiteReason } from './case-key.js';
import { ResultsLineParser, streamResultLines, type ResultsStreamEnd } from './results-stream.js';
import type { FinishedLookup } from './run.js';

/** An interrupted run's results file, read for `--resume` without holding its lines. */
export interface ResumeFile extends ResultsStreamEnd {
  header: ResultsHeader | null;
  finished: FinishedCases;
  /** Case lines in the file (warmup and scored): the receipt's `finished_before`. */
  case_lines: number;
}

/**
 * Reads a results file line by line (the rules of `readResultsFile`) and keeps, for each finished
 * (phase, pass, index) of a suite of `count` cases, only where its line is: 12 bytes a case, read back when needed.
 */
export function readResumeFile(path: string, count: number): ResumeFile {
  const parser = new ResultsLineParser(path, {
    header: (h) => {
      header = h;
      // One slot per (pass, index) of every pass the header says (slotOf).
      warmup = nonNegative(h.warmup);
      passes = warmup + nonNegative(h.repeats);
      offsets = new Float64Array(passes * count);
      lengths = new Uint32Array(passes * count);
    },
    case: (r) => {
      caseLines++;
      // An index past this suite's cases is refused by the run once it knows the file is this suite's.
      if (r.index >= count) outside ??= pastSuiteReason(path, lineNo, r, count);
      const slot = slotOf(r.phase, r.pass, r.index, count, warmup, passes);
      if (slot < 0) return;
      offsets[slot] = lineOffset + 1;
      lengths[slot] = lineBytes;
      size++;
    },
    other: () => {},
  });
  let header: ResultsHeader | null = null;
  let warmup = 0;
  let passes = 0;
  let offsets = new Float64Array(0);
  let lengths = new Uint32Array(0);
  let size = 0;
  let caseLines = 0;
  let lineOffset = 0;
  let lineBytes = 0;
  let lineNo = 0;
  let outside: string | null = null;
  // Each complete line is parsed where it lies, so its byte offset and length are known exactly.
  const end = streamResultLines(path, {
    region: (buf, start, stop, firstLine, offset) => {
      for (let s = start, n = firstLine; s <= stop; n++) {
        const nl = buf.indexOf(0x0a, s);
        const e = nl < 0 || nl > stop ? stop : nl;
        lineOffset = offset + (s - start);
        lineBytes = e - s;
        lineNo = n;
        parser.line(buf.toString('utf8', s, e), n);
        s = e + 1;
      }
    },
  });
  return { header, finished: new FinishedCases(path, count, warmup, passes, offsets, lengths, size, outside), case_lines: caseLines, ...end };
}

/** The slot of (phase, pass, index): warmup passes first, then scored, `count` slots a pass; -1 outside them. */
function slotOf(phase: Phase, pass: number, index: number, count: number, warmup: number, passes: number): number {
  const p = phase === 'warmup' ? (pass < warmup ? pass : -1) : pass < passes - warmup ? warmup + pass : -1;
  return p < 0 || index < 0 || index >= count ? -1 : p * count + index;
}

function nonNegative(n: unknown): number {
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0;
}

/** The finished cases of an interrupted run, by slot, read back from the file one line at a time. */
export class FinishedCases implements FinishedLookup {
  private fd = -1;
  private buf = Buffer.allocUnsafe(1 << 12);

  constructor(
    private readonly path: string,
    private readonly count: number,
    private readonly warmup: number,
    private readonly passes: number,
    private readonly offsets: Float64Array,
    private readonly lengths: Uint32Array,
    readonly size: number,
    readonly outside: string | null = null,
  ) {}

  get(phase: Phase, pass: number, index: number): CaseResult | undefined {
    const slot = slotOf(phase, pass, index, this.count, this.warmup, this.passes);
    if (slot < 0) return undefined;
    const at = this.offsets[slot]!;
    if (at === 0) return undefined;
    const bytes = this.lengths[slot]!;
    if (this.fd < 0) this.fd = openSync(this.path, 'r');
    if (this.buf.length < bytes) this.buf = Buffer.allocUnsafe(bytes);
    let got = 0;
    while (got < bytes) {
      const n = readSync(this.fd, this.buf, got, bytes - got, at - 1 + got);
      if (n === 0) throw new JoulebenchError('E_RESULTS', `${this.path}: shorter than when it was read for --resume (changed while the run went on)`);
      got += n;
    }
    let r: CaseResult | undefined;
    try {
      r = JSON.parse(this.buf.toString('utf8', 0, bytes)) as CaseResult;
    } catch {
      r = undefined;
    }
    // The line that was read at this offset: anything else means the file was rewritten under the run.
    if (r?.record !== 'case' || r.phase !== phase || r.pass !== pass || r.index !== index) {
      throw new JoulebenchError('E_RESULTS', `${this.path}: changed while the run went on (the line of ${phase} pass ${pass} index ${index} is no longer where --resume read it)`);
    }
    return r;
  }

  firstMissing(phase: Phase, pass: number, n: number): number {
    for (let i = 0; i < n; i++) {
      const slot = slotOf(phase, pass, i, this.count, this.warmup, this.passes);
      if (slot < 0 || this.offsets[slot] === 0) return i;
    }
    return -1;
  }

  /** Closes the file the finished lines are read back from. */
  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
