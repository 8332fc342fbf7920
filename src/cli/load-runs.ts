import { History, defaultHistoryPath, type HistoryInput } from '../report/history.js';
import type { InputReaders, LoadedRun, LoadOptions, ReportInput, ResolvedSpec } from '../report/inputs.js';
import type { CliIO } from './io.js';

// The readers (src/report/inputs.ts and the code/infer readers behind it) are loaded on use:
// `infer` and `code` import this file only to record into the history.
type Inputs = typeof import('../report/inputs.js');

async function withHistory<T>(specs: readonly string[], useHistory: boolean, load: (m: Inputs, readers: InputReaders, resolved: ResolvedSpec[]) => T): Promise<T> {
  const m = await import('../report/inputs.js');
  const needsHistory = useHistory && specs.some((s) => m.parseRunId(s) !== null);
  const history = needsHistory ? await History.open(defaultHistoryPath()) : null;
  try {
    const resolved = m.resolveSpecs(specs, history);
    // Only the readers these inputs need (a results file needs none of the zod, code or infer readers).
    return load(m, await m.readersFor(resolved), resolved);
  } finally {
    history?.close();
  }
}

/** What an input must say beside its figures (a results file that is not one whole run), on stderr whatever the output format. */
export function warnAboutInputs(io: CliIO, runs: readonly (ReportInput | LoadedRun)[]): void {
  for (const r of runs) for (const w of ('warnings' in r ? r.warnings : undefined) ?? []) io.err(`joulebench: warning: ${w}\n`);
}

/** Loads suite reports, results files and run ids; the history database is opened only when a run id is given. */
export async function loadRunsForCli(specs: readonly string[], useHistory = true, opts: LoadOptions = {}): Promise<LoadedRun[]> {
  return withHistory(specs, useHistory, (m, readers, resolved) => m.loadRunsWith(readers, resolved, opts));
}

/** As `loadRunsForCli`, plus `joulebench code` results and `joulebench infer` run files (for report and frontier). */
export async function loadInputsForCli(specs: readonly string[], useHistory = true, opts: LoadOptions = {}): Promise<ReportInput[]> {
  return withHistory(specs, useHistory, (m, readers, resolved) => m.loadInputsWith(readers, resolved, opts));
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
