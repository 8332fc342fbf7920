import { History, defaultHistoryPath } from '../report/history.js';
import { isRunSpec, loadRuns, type LoadedRun } from '../report/inputs.js';

/** Loads files, results files and run ids; the history database is opened only when a run id is given. */
export async function loadRunsForCli(specs: readonly string[], useHistory = true): Promise<LoadedRun[]> {
  const needsHistory = useHistory && specs.some(isRunSpec);
  const history = needsHistory ? await History.open(defaultHistoryPath()) : null;
  try {
    return loadRuns(specs, history);
  } finally {
    history?.close();
  }
}
