import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CaseResult, ResultsHeader } from '../core/types.js';

/** Where the runner sends each result as soon as it is known. */
export interface ResultsSink {
  header(h: ResultsHeader): void;
  write(r: CaseResult): void;
  close(): void;
}

/**
 * Appends one JSON line per result with a synchronous write, so a run killed at any point (even
 * SIGKILL) has every finished case on disk. The file is opened once; each write is one syscall.
 */
export class JsonlResultsFile implements ResultsSink {
  private fd: number;
  constructor(
    readonly path: string,
    opts: { append?: boolean } = {},
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, opts.append ? 'a' : 'w');
  }
  header(h: ResultsHeader): void {
    writeSync(this.fd, JSON.stringify(h) + '\n');
  }
  write(r: CaseResult): void {
    writeSync(this.fd, JSON.stringify(r) + '\n');
  }
  close(): void {
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
