import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Datapoint } from './oracle.js';
import type { CodeRunStart } from './run.js';

/** The format tag of the first line of a streamed datapoints file. */
export const DATAPOINTS_FORMAT = 'joulebench-code-datapoints/1';

/**
 * Streams a coding run to JSONL: a header line, then each datapoint the moment it is graded (a synchronous
 * append), so a crashed run whose agent calls cost real money loses nothing. `--report FILE.jsonl` reads it.
 */
export class DatapointsFile {
  constructor(readonly path: string) {}

  /** Starts the file (truncating it) with the header line. */
  start(start: CodeRunStart): void {
    mkdirSync(dirname(this.path), { recursive: true });
    writeFileSync(this.path, JSON.stringify({ record: 'header', format: DATAPOINTS_FORMAT, ...start }) + '\n');
  }

  /** Appends one datapoint. */
  write(d: Datapoint): void {
    appendFileSync(this.path, JSON.stringify({ record: 'datapoint', ...d }) + '\n');
  }
}
