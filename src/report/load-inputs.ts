import { summarizeResults } from '../code/aggregate.js';
import { readCodeResults } from '../code/results.js';
import { readInferFile } from '../infer/load.js';
import type { History } from './history.js';
import { loadInputsWith, loadRunsWith, resolveSpecs, type InputReaders, type LoadedRun, type LoadOptions, type ReportInput } from './inputs.js';
import { readReportFile } from './load.js';

/** Every input reader, imported up front (the library's synchronous loaders; the CLI imports only those its inputs need). */
const ALL_READERS: InputReaders = { readCodeResults, summarizeResults, readInferFile, readReportFile };

/** Loads each spec: a report JSON (with its results and receipt siblings), a results JSONL, or a history run id. */
export function loadRuns(specs: readonly string[], history: History | null, opts: LoadOptions = {}): LoadedRun[] {
  return loadRunsWith(ALL_READERS, resolveSpecs(specs, history), opts);
}

/** Loads each spec for `report` and `frontier`: what `loadRuns` takes, plus code results and infer run files. */
export function loadInputs(specs: readonly string[], history: History | null, opts: LoadOptions = {}): ReportInput[] {
  return loadInputsWith(ALL_READERS, resolveSpecs(specs, history), opts);
}
