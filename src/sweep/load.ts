import { existsSync } from 'node:fs';
import type { BenchReport } from '../core/aggregate.js';
import type { ResultsHeader } from '../core/types.js';
import { FirstCases, type CaseLatency } from '../report/first-cases.js';
import { readReportFile } from '../report/load.js';
import { rebuildReport } from '../report/rebuild.js';
import { sweepComparison, type SweepArmRun, type SweepComparison } from './comparison.js';
import { readSweepState, type SweepState } from './state.js';

/** A sweep folder's finished runs, loaded. */
export interface LoadedSweep {
  dir: string;
  state: SweepState;
  runs: LoadedSweepRun[];
  missing: SweepComparison['missing'];
}

/** An arm's run; with `casesLimit`, also its first scored cases for the HTML page, read in the same pass. */
interface LoadedSweepRun extends SweepArmRun {
  cases?: { results: CaseResultList; header: ResultsHeader; scored_total: number; case_latency_ms: CaseLatency };
}

type CaseResultList = FirstCases['cases'];

interface LoadSweepOptions {
  /**
   * Keep each arm's first `casesLimit` scored cases whole (and count all, with their latency
   * percentiles), from the same pass over its results file that reads the paired figures.
   */
  casesLimit?: number;
}

export function loadSweep(dir: string, opts: LoadSweepOptions = {}): LoadedSweep {
  const state = readSweepState(dir);
  const runs: LoadedSweepRun[] = [];
  const missing: SweepComparison['missing'] = [];
  for (const e of state.runs) {
    if (e.status !== 'done' || !existsSync(e.report)) {
      missing.push({ arm: e.arm, suite: e.suite, reason: e.status === 'failed' ? `failed: ${e.error}` : e.status === 'done' ? 'report file missing' : `not finished (${e.status})` });
      continue;
    }
    const report: BenchReport = readReportFile(e.report);
    if (!existsSync(e.results)) {
      runs.push({ arm: e.arm, suite: e.suite, report, results: null, paired: null, results_path: null });
      continue;
    }
    // Pairing reads seven figures a case: those stream into columns, the cases are not kept (but the
    // first `casesLimit`, when asked for).
    const first = opts.casesLimit !== undefined ? new FirstCases(opts.casesLimit) : null;
    const rebuilt = rebuildReport(e.results, first ? { keep: 'paired', onScored: first.add } : { keep: 'paired' });
    const run: LoadedSweepRun = { arm: e.arm, suite: e.suite, report, results: null, paired: rebuilt.paired, results_path: e.results };
    if (first) run.cases = { results: first.cases, header: rebuilt.header, ...first.summary() };
    runs.push(run);
  }
  return { dir, state, runs, missing };
}

/** The comparison of a sweep folder, with the settings the sweep recorded unless `opts` gives others. */
export function compareSweep(loaded: LoadedSweep, opts: { alpha?: number; pAdjust?: 'holm' | 'none'; resamples?: number; maxUnits?: number | 'inf' } = {}): SweepComparison {
  const { state } = loaded;
  const recorded = state.comparison;
  const settings = recorded
    ? { alpha: recorded.alpha, resamples: recorded.resamples, ...(recorded.max_units !== undefined ? { maxUnits: recorded.max_units } : {}), ...(recorded.p_adjust !== undefined ? { pAdjust: recorded.p_adjust } : {}) }
    : {};
  return sweepComparison(
    { id: state.id, name: state.plan.name, suites: state.plan.suites, arms: state.plan.arms.map((a) => a.name), baseline: state.plan.baseline },
    loaded.runs,
    { ...settings, ...opts, missing: loaded.missing },
  );
}
