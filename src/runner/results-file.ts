import { closeSync, mkdirSync, openSync, truncateSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import { readTextFileBom } from '../read-text.js';
import { caseLine } from './case-line.js';
import { checkCaseLine } from './case-check.js';
import { caseLimits, NO_LIMITS, outsideRunReason, phaseRank, withinRun, type CaseLimits } from './case-key.js';
import { CaseLines } from './case-lines.js';

/** Where the runner sends each result as soon as it is known. */
export interface ResultsSink {
  header(h: ResultsHeader): void;
  /** `now_ms`: `performance.now()` when the result was known, if the caller has just read it. */
  write(r: CaseResult, now_ms?: number): void;
  /** Other record kinds (`resume`, `rewarm`): facts about the run that are not scored results. */
  note?(line: Record<string, unknown>): void;
  /** Pushes anything buffered to the file now. */
  flush?(): void;
  close(): void;
}

interface JsonlResultsFileOptions {
  /** Append to an existing file (resume) instead of truncating. */
  append?: boolean;
  /** Longest a finished result may wait in memory before it is written, ms (default 2; 0: every line at once). */
  flush_ms?: number;
}

/**
 * Appends one JSON line per result, with synchronous writes (they survive the process being killed) in
 * groups: a group is written once `flush_ms` has passed since the last write, by the next result or a timer.
 */
export class JsonlResultsFile implements ResultsSink {
  private fd: number;
  /** Lines wait in this reusable buffer until the next write. */
  private buffer = Buffer.allocUnsafe(BUFFER_BYTES);
  private used = 0;
  private lastFlush = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private readonly flushMs: number;
  private readonly onExit = () => {
    try {
      this.flush();
    } catch {
      // exiting anyway; the failure was (or is about to be) reported by whoever wrote last
    }
  };
  /** A write that failed (disk full, read-only) from a timer flush, re-thrown at the next write. */
  private failure: Error | null = null;

  constructor(
    readonly path: string,
    opts: JsonlResultsFileOptions = {},
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, opts.append ? 'a' : 'w');
    this.flushMs = opts.flush_ms ?? 2;
    process.on('exit', this.onExit);
  }

  header(h: ResultsHeader): void {
    this.append(JSON.stringify(h));
    this.flush();
  }

  write(r: CaseResult, now_ms?: number): void {
    // The caller's reading is used only if no flush has happened since it was taken.
    this.append(caseLine(r), now_ms !== undefined && now_ms >= this.lastFlush ? now_ms : undefined);
  }
  note(line: Record<string, unknown>): void {
    this.append(JSON.stringify(line));
  }

  /** Adds `json` and a newline; `now_ms`: the clock's reading, if the caller has one. */
  private append(json: string, now_ms = performance.now()): void {
    // A UTF-16 code unit is at most 3 bytes of UTF-8.
    this.reserve(json.length * 3 + 1);
    this.used += this.buffer.write(json, this.used);
    this.buffer[this.used++] = 0x0a;
    this.written(now_ms);
  }

  /** Makes room for `bytes` more (writing out or growing the buffer); the flush clock is left alone. */
  private reserve(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    this.writeOut();
    if (bytes >= this.buffer.length) this.buffer = Buffer.allocUnsafe(bytes + 1);
  }

  /** A line was added at `now`: writes the group once `flush_ms` has passed since the last write. */
  private written(now: number): void {
    if (this.flushMs <= 0 || now - this.lastFlush >= this.flushMs) {
      this.flush(now);
    } else if (this.timer === null) {
      this.timer = setTimeout(() => {
        try {
          this.flush();
        } catch (e) {
          this.failure = e as Error;
        }
      }, this.flushMs);
      this.timer.unref();
    }
  }

  flush(now = performance.now()): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.writeOut();
    this.lastFlush = now;
  }

  /** Hands the buffered lines to the kernel (a synchronous write survives the process being killed). */
  private writeOut(): void {
    if (this.failure !== null) throw this.failure;
    if (this.used > 0 && this.fd >= 0) {
      let off = 0;
      try {
        while (off < this.used) {
          const n = writeSync(this.fd, this.buffer, off, this.used - off);
          if (n === 0) throw Object.assign(new Error(`${this.path}: the file accepts no more bytes`), { code: 'ENOSPC', syscall: 'write' });
          off += n;
        }
      } catch (e) {
        // Disk full or read-only: the lines cannot be kept; name the file (a write error carries no path).
        this.used = 0;
        const err = e as NodeJS.ErrnoException;
        if (err.path === undefined) err.path = this.path;
        this.failure = err;
        throw err;
      }
      this.used = 0;
    }
  }

  close(): void {
    try {
      if (this.failure === null) this.flush();
    } finally {
      process.off('exit', this.onExit);
      if (this.fd >= 0) closeSync(this.fd);
      this.fd = -1;
    }
  }
}

/** 1 MiB: far more than 2 ms of results, so in practice only the clock triggers a write. */
const BUFFER_BYTES = 1 << 20;

/** Keeps results in memory only (library use, tests). */
export class MemorySink implements ResultsSink {
  headerLine: ResultsHeader | null = null;
  readonly results: CaseResult[] = [];
  header(h: ResultsHeader): void {
    this.headerLine = h;
  }
  readonly notes: Record<string, unknown>[] = [];
  write(r: CaseResult): void {
    this.results.push(r);
  }
  note(line: Record<string, unknown>): void {
    this.notes.push(line);
  }
  close(): void {}
}

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
 * Reads a results JSONL. A torn last line (no trailing newline: the process died mid-write) is dropped;
 * a bad line anywhere else is E_RESULTS naming the file and line, because that is not a crash artefact.
 */
export function readResultsFile(path: string): ResultsFileContents {
  return readResultsFileText(path).contents;
}

/** {@link readResultsFile} with the file's text as well (the judge rewrites the file from it). */
export function readResultsFileText(path: string): { text: string; contents: ResultsFileContents } {
  const { text, bom_bytes } = readTextFileBom(path, 'E_RESULTS');
  const contents = parseResultsText(text, path);
  // `good_bytes` is an offset in the file (truncateResultsFile cuts there): a leading BOM, dropped from
  // the text, is bytes of it.
  contents.good_bytes += bom_bytes;
  return { text, contents };
}

/** The parsing half of {@link readResultsFile}, for text already in memory. */
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

/** Cuts a torn last line off a results file so appended lines start on a fresh line. */
export function truncateResultsFile(path: string, goodBytes: number): void {
  truncateSync(path, goodBytes);
}
