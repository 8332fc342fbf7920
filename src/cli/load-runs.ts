import { History, defaultHistoryPath, type HistoryInput } from '../report/history.js';
import type { CliIO } from './io.js';
import { isRunSpec, loadInputs, loadRuns, type LoadedRun, type ReportInput } from '../report/inputs.js';

async function withHistory<T>(specs: readonly string[], useHistory: boolean, load: (h: History | null) => T): Promise<T> {
  const needsHistory = useHistory && specs.some(isRunSpec);
  const history = needsHistory ? await History.open(defaultHistoryPath()) : null;
  try {
    return load(history);
  } finally {
    history?.close();
  }
}

/** Loads suite reports, results files and run ids; the history database is opened only when a run id is given. */
export async function loadRunsForCli(specs: readonly string[], useHistory = true): Promise<LoadedRun[]> {
  return withHistory(specs, useHistory, (h) => loadRuns(specs, h));
}

/** As `loadRunsForCli`, plus `joulebench code` results and `joulebench infer` run files (for report and frontier). */
export async function loadInputsForCli(specs: readonly string[], useHistory = true): Promise<ReportInput[]> {
  return withHistory(specs, useHistory, (h) => loadInputs(specs, h));
}

/** Records a run in the history; one that cannot be written is a warning on stderr, never a lost run. */
export async function recordForCli(io: CliIO, input: HistoryInput): Promise<number | null> {
  try {
    return await History.recordOnce(input);
  } catch (e) {
    io.err(`warning: run not recorded in history: ${(e as Error).message.split('\n')[0]}\n`);
    return null;
  }
}
