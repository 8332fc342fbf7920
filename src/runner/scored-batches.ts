import type { CaseResult } from '../core/types.js';
import { streamResultsFile } from './results-stream.js';

/** Cases handed over at a time by {@link forEachScoredBatch}. */
const SCORED_BATCH = 1024;

/**
 * A results file's scored cases, parsed, {@link SCORED_BATCH} at a time in file order: per-case output
 * (CSV, JSONL rows) written as the file is read, never every case held at once.
 */
export function forEachScoredBatch(path: string, each: (batch: CaseResult[]) => void): void {
  let batch: CaseResult[] = [];
  streamResultsFile(path, {
    header: () => {},
    case: (r) => {
      if (r.phase !== 'scored') return;
      batch.push(r);
      if (batch.length === SCORED_BATCH) {
        each(batch);
        batch = [];
      }
    },
    other: () => {},
  });
  if (batch.length > 0) each(batch);
}
