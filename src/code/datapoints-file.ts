import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Datapoint } from './oracle.js';
import type { CodeRunStart } from './run.js';

/** The format tag of the first line of a streamed datapoints file. */
export const DATAPOINTS_FORMAT = 'joulebench-code-datapoints/1';

/** Each task's wall time over its valid rollouts (summed), ms: the one population of a solver's wall median and p95. */
export function taskWallsMs(valid: readonly Datapoint[]): number[] {
  const byTask = new Map<string, number>();
  for (const d of valid) byTask.set(d.task, (byTask.get(d.task) ?? 0) + (d.solver_run?.wall_ms ?? 0));
  return [...byTask.values()];
}

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

  write(d: Datapoint): void {
    appendFileSync(this.path, JSON.stringify({ record: 'datapoint', ...d }) + '\n');
  }
}
