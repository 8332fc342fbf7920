import { existsSync } from 'node:fs';
import type { BenchReport } from '../core/aggregate.js';
import { readReportFile } from '../report/load.js';
import { rebuildReport } from '../report/rebuild.js';
import { sweepComparison, type SweepArmRun, type SweepComparison } from './comparison.js';
import { readSweepState, type SweepState } from './state.js';

/** A sweep folder's finished runs, loaded. */
export interface LoadedSweep {
  dir: string;
  state: SweepState;
  runs: SweepArmRun[];
  missing: SweepComparison['missing'];
}

export function loadSweep(dir: string): LoadedSweep {
  const state = readSweepState(dir);
  const runs: SweepArmRun[] = [];
  const missing: SweepComparison['missing'] = [];
  for (const e of state.runs) {
    if (e.status !== 'done' || !existsSync(e.report)) {
      missing.push({ arm: e.arm, suite: e.suite, reason: e.status === 'failed' ? `failed: ${e.error}` : e.status === 'done' ? 'report file missing' : `not finished (${e.status})` });
      continue;
    }
    const report: BenchReport = readReportFile(e.report);
    // Pairing reads seven figures a case: those stream into columns, the cases are not kept.
    const paired = existsSync(e.results) ? rebuildReport(e.results, { keep: 'paired' }).paired : null;
    runs.push({ arm: e.arm, suite: e.suite, report, results: null, paired, results_path: existsSync(e.results) ? e.results : null });
  }
  return { dir, state, runs, missing };
}

/** The comparison of a sweep folder, with the settings the sweep recorded unless `opts` gives others. */
export function compareSweep(loaded: LoadedSweep, opts: { alpha?: number; resamples?: number; maxUnits?: number | 'inf' } = {}): SweepComparison {
  const { state } = loaded;
  const recorded = state.comparison;
  const settings = recorded
    ? { alpha: recorded.alpha, resamples: recorded.resamples, ...(recorded.max_units !== undefined ? { maxUnits: recorded.max_units } : {}) }
    : {};
  return sweepComparison(
    { id: state.id, name: state.plan.name, suites: state.plan.suites, arms: state.plan.arms.map((a) => a.name), baseline: state.plan.baseline },
    loaded.runs,
    { ...settings, ...opts, missing: loaded.missing },
  );
}
