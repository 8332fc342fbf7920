import { stringify } from 'csv-stringify/sync';
import type { Datapoint } from '../code/oracle.js';
import type { Comparison } from '../core/compare.js';
import type { Arm, FrontierAxis, FrontierReport } from '../core/frontier.js';
import type { CaseResult } from '../core/types.js';

/** A cell: text, a number, a boolean, or `null` (an empty field: unknown, never 0). */
type Cell = string | number | boolean | null;

/** RFC 4180 CSV (csv-stringify): a header row, CRLF line ends; `null` is an empty field. */
export const toCsv = (header: readonly string[], rows: readonly (readonly Cell[])[]): string => csvRows([header, ...rows]);

/** Records as CSV lines (each ends in CRLF), no header added. */
function csvRows(rows: readonly (readonly Cell[])[]): string {
  return stringify(rows.map((r) => r.map((c) => (c === null ? '' : typeof c === 'boolean' ? String(c) : c))), { record_delimiter: 'windows' });
}

/** The case columns: `run` names the run, `error` is `code: message`, every other is the CaseResult field of that name. */
const CASE_COLUMNS = [
  'run', 'phase', 'pass', 'index', 'case_id', 'dataset', 'passed', 'score', 'weight', 'stage', 'joules', 'energy_source', 'below_floor',
  'latency_ms', 'ttft_ms', 'tpot_ms', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'attempts', 'retry_overhead_ms', 'error', 'expected',
  'response',
] as const;

/** Per-case results, one row per case and pass, under a `run` column naming where each came from. */
export function casesCsv(runs: readonly { label: string; results: readonly CaseResult[] }[]): string {
  return casesCsvHeader() + runs.map(({ label, results }) => casesCsvRows(label, results)).join('');
}

/** The header row of {@link casesCsv}; with {@link casesCsvRows} of each batch of cases, the same text a piece at a time. */
export function casesCsvHeader(): string {
  return toCsv(CASE_COLUMNS, []);
}

/** {@link casesCsv}'s rows for some of one run's cases (no header). */
export function casesCsvRows(label: string, results: readonly CaseResult[]): string {
  if (results.length === 0) return '';
  const error = (r: CaseResult): string | null => (r.error ? `${r.error.code}: ${r.error.message}` : null);
  return csvRows(results.map((r) => CASE_COLUMNS.map((c): Cell => (c === 'run' ? label : c === 'error' ? error(r) : r[c]))));
}

/** Arms (suite runs, code solvers) with their headline figures and, when given, their frontier verdicts. */
export function armsCsv(arms: readonly Arm[], frontier?: FrontierReport, kinds?: Record<string, string>): string {
  const axes: FrontierAxis[] = ['energy', 'cost', 'latency'];
  const header = ['arm', 'kind', 'accuracy_pct', 'joules_per_correct', 'energy_source', 'usd_per_correct', 'latency_p95_ms', 'below_floor_count', 'asked'];
  if (frontier) for (const a of axes) header.push(`${a}_frontier`, `${a}_why`);
  const rows = arms.map((a): Cell[] => {
    const row: Cell[] = [a.id, kinds?.[a.id] ?? null, a.accuracy_pct, a.joules_per_correct, a.energy_source, a.usd_per_correct, a.latency_p95_ms, a.below_floor_count, a.asked ?? null];
    if (frontier) {
      for (const axis of axes) {
        const v = frontier.frontiers[axis].verdicts.find((x) => x.id === a.id);
        row.push(v ? (v.excluded ? 'not placed' : v.optimal ? 'optimal' : 'dominated') : null);
        row.push(v ? (v.excluded ?? (v.optimal ? null : `dominated by ${v.dominated_by.join(' ')}`)) : null);
      }
    }
    return row;
  });
  return toCsv(header, rows);
}

/** A comparison: one row per figure with baseline, candidate and the change. */
export function comparisonCsv(c: Comparison): string {
  return toCsv(
    ['metric', 'baseline', 'candidate', 'change', 'change_unit'],
    [
      ['joules_per_correct', c.baseline.joules_per_correct, c.candidate.joules_per_correct, c.joules_per_correct_pct, 'pct'],
      ['latency_p95_ms', c.baseline.latency_p95_ms, c.candidate.latency_p95_ms, c.latency_p95_pct, 'pct'],
      ['accuracy_pct', c.baseline.accuracy_pct, c.candidate.accuracy_pct, c.accuracy_pp_delta, 'points'],
      ['usd_per_correct', c.baseline.usd_per_correct ?? null, c.candidate.usd_per_correct ?? null, c.usd_per_correct_pct, 'pct'],
      ['total_usd', c.baseline.total_usd ?? null, c.candidate.total_usd ?? null, c.total_usd_pct, 'pct'],
      ['energy_source', c.baseline.energy_source ?? null, c.candidate.energy_source ?? null, c.energy_sources_match, 'match'],
    ],
  );
}

/** A coding-agent run's datapoints: one row per task × solver × rollout. */
export function datapointsCsv(runs: readonly { label: string; datapoints: readonly Datapoint[] }[]): string {
  const rows = runs.flatMap(({ label, datapoints }) =>
    datapoints.map((d): Cell[] => [
      label,
      d.task,
      d.solver,
      d.rollout,
      d.valid,
      d.invalid_reason,
      d.resolved,
      d.solver_run?.wall_ms ?? null,
      d.solver_run?.exit_code ?? null,
      d.solver_run?.timed_out ?? null,
      d.joules,
      d.tests_modified.join(' '),
      d.escapes.join(' '),
      d.image ?? null,
    ]),
  );
  return toCsv(['run', 'task', 'solver', 'rollout', 'valid', 'invalid_reason', 'resolved', 'wall_ms', 'exit_code', 'timed_out', 'joules', 'tests_modified', 'escapes', 'image'], rows);
}
