import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { CaseResult, ResultsHeader } from '../core/types.js';

/** Where the runner sends each result as soon as it is known. */
export interface ResultsSink {
  header(h: ResultsHeader): void;
  write(r: CaseResult): void;
  /** Pushes anything buffered to the file now. */
  flush?(): void;
  close(): void;
}

export interface JsonlResultsFileOptions {
  /** Append to an existing file (resume) instead of truncating. */
  append?: boolean;
  /**
   * Longest a finished result may wait in memory before it is written, ms. Default 2. A case that
   * takes longer than this is written the moment it finishes; only results finished within the last
   * `flush_ms` can be lost if the process is killed outright (SIGKILL). 0 writes every line at once.
   */
  flush_ms?: number;
}

/**
 * Appends one JSON line per result. Lines are written with synchronous writes (they reach the
 * kernel, so they survive the process being killed) in small groups: a group is written once
 * `flush_ms` has passed since the last write, by the next result or by a timer, whichever comes
 * first. Grouping keeps the cost per line at a fraction of a syscall when cases take microseconds;
 * for cases slower than `flush_ms` every line is written as soon as it is known.
 */
export class JsonlResultsFile implements ResultsSink {
  private fd: number;
  private buffer = '';
  private lastFlush = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private readonly flushMs: number;
  private readonly onExit = () => this.flush();

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
    this.append(JSON.stringify(h) + '\n');
    this.flush();
  }

  write(r: CaseResult): void {
    this.append(JSON.stringify(r) + '\n');
  }

  private append(line: string): void {
    this.buffer += line;
    const now = performance.now();
    if (this.flushMs <= 0 || now - this.lastFlush >= this.flushMs || this.buffer.length >= 1 << 20) {
      this.flush(now);
    } else if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  flush(now = performance.now()): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.buffer.length > 0 && this.fd >= 0) {
      writeSync(this.fd, this.buffer);
      this.buffer = '';
    }
    this.lastFlush = now;
  }

  close(): void {
    this.flush();
    process.off('exit', this.onExit);
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

/** Keeps results in memory only (library use, tests). */
export class MemorySink implements ResultsSink {
  headerLine: ResultsHeader | null = null;
  readonly results: CaseResult[] = [];
  header(h: ResultsHeader): void {
    this.headerLine = h;
  }
  write(r: CaseResult): void {
    this.results.push(r);
  }
  close(): void {}
}
