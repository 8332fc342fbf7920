import type { CodeResults } from '../code/results.js';
import type { InferRunFile } from '../infer/protocol.js';
import type { HistoryInput } from './history.js';
import { inferArmViews } from './infer-view.js';

/** A `joulebench code` run for the history: accuracy, J and $ per resolved task are listed only when one solver ran. */
export function codeHistoryInput(results: CodeResults, paths: { results?: string | null; datapoints?: string | null } = {}): HistoryInput {
  const one = results.solvers.length === 1 ? results.solvers[0]! : null;
  const sources = [...new Set(results.solvers.map((s) => s.energy_source))];
  return {
    report: results as unknown as Record<string, unknown>,
    receipt: results.receipt ?? null,
    paths: { report: paths.results ?? null, results: paths.datapoints ?? null, receipt: null },
    fields: {
      suite: results.suite.name,
      suite_digest: results.suite.digest || null,
      target: `solvers: ${results.solvers.map((s) => s.solver).join(', ')}`,
      meter: results.config.meter.id,
      case_count: results.datapoints.length,
      accuracy_pct: one?.resolution_pct ?? null,
      joules_per_correct: one?.joules_per_resolved ?? null,
      usd_per_correct: one?.usd_per_resolved ?? null,
      latency_p95_ms: null,
      energy_source: sources.length === 0 ? 'none' : sources.length === 1 ? sources[0]! : 'mixed',
      below_floor_count: results.solvers.reduce((n, s) => n + s.below_floor_count, 0),
    },
  };
}

/** A `joulebench infer` run for the history: no accuracy and no J/correct (nothing is graded); the prompt digest as the dataset digest. */
export function inferHistoryInput(file: InferRunFile, path: string | null): HistoryInput {
  const views = inferArmViews('run', file);
  const sources = [...new Set(views.filter((v) => !v.contaminated).map((v) => v.energy_source))];
  const rc = file.receipts;
  return {
    report: file as unknown as Record<string, unknown>,
    receipt: { started_utc: file.started_utc, finished_utc: file.finished_utc, joulebench_version: rc.joulebench_version, node_version: rc.node_version, host: rc.host, argv: rc.argv },
    paths: { report: path, results: null, receipt: null },
    fields: {
      suite: 'infer prompt',
      suite_digest: `sha256:${file.prompt_sha256}`,
      target: `${file.target.kind}: ${[...new Set(file.arms.map((a) => a.id))].join(', ')}`,
      meter: typeof rc.meter.id === 'string' ? rc.meter.id : 'none',
      case_count: file.arms.reduce((n, a) => n + a.runs.length, 0),
      accuracy_pct: null,
      joules_per_correct: null,
      usd_per_correct: null,
      latency_p95_ms: null,
      energy_source: sources.length === 0 ? 'none' : sources.length === 1 ? sources[0]! : 'mixed',
      below_floor_count: file.arms.reduce((n, a) => n + a.runs.filter((r) => r.below_floor).length, 0),
    },
  };
}
