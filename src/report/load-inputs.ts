import { summarizeSolvers } from '../code/aggregate.js';
import { readCodeResults } from '../code/results.js';
import { readInferFile } from '../infer/load.js';
import type { History } from './history.js';
import { loadInputsWith, loadRunsWith, resolveSpecs, type InputReaders, type LoadedRun, type LoadOptions, type ReportInput } from './inputs.js';
import { readReportFile } from './load.js';

/** Every input reader, imported up front (the library's synchronous loaders; the CLI imports only those its inputs need). */
const ALL_READERS: InputReaders = { readCodeResults, summarizeSolvers, readInferFile, readReportFile };

/**
 * Loads each spec: a report JSON (its `.results.jsonl` and `.receipt.json` siblings are picked up when
 * present), a results JSONL (aggregated here), or a history run id. `history` is opened by the caller
 * only when some spec is a run id.
 */
export function loadRuns(specs: readonly string[], history: History | null, opts: LoadOptions = {}): LoadedRun[] {
  return loadRunsWith(ALL_READERS, resolveSpecs(specs, history), opts);
}

/**
 * Loads each spec for `report` and `frontier`: everything `loadRuns` takes, plus `joulebench code`
 * results (JSON, or the streamed datapoints JSONL) and `joulebench infer` run files, by file or run id.
 */
export function loadInputs(specs: readonly string[], history: History | null, opts: LoadOptions = {}): ReportInput[] {
  return loadInputsWith(ALL_READERS, resolveSpecs(specs, history), opts);
}
