import { closeSync, mkdirSync, openSync, truncateSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import { caseLine } from './case-line.js';

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

/** Cuts a torn last line off a results file so appended lines start on a fresh line. */
export function truncateResultsFile(path: string, goodBytes: number): void {
  truncateSync(path, goodBytes);
}
