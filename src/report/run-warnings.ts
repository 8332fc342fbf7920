import type { CaseResult } from '../core/types.js';
import type { BenchReport } from '../core/aggregate.js';

/**
 * Lines a person must see after a run, each once, whatever `--quiet` says: figures the report leaves
 * `null`/`n/a` for a reason the numbers alone do not show. Pure: the CLI prints them.
 */
export function reportWarnings(r: Pick<BenchReport, 'cost_unknown_count' | 'total_usd' | 'target' | 'case_count'>): string[] {
  const out: string[] = [];
  if (r.total_usd === null && r.cost_unknown_count > 0) {
    out.push(
      `cost unknown for ${r.cost_unknown_count} of ${r.case_count} case(s) of ${r.target}: tokens were used but no price bills them ` +
        '(set prices.input_usd_per_mtok and prices.output_usd_per_mtok in the config; 0 for a free model)',
    );
  }
  return out;
}

/** The line shown the first time a kind of target failure happens: case, code, HTTP status, cause. */
export function firstErrorLine(r: Pick<CaseResult, 'case_id' | 'phase' | 'error'>): string {
  const e = r.error;
  if (!e) return '';
  return `target error on case "${r.case_id}"${r.phase === 'warmup' ? ' (warmup)' : ''}: ${e.code}${e.status !== undefined ? ` (HTTP ${e.status})` : ''}: ${e.message} (each kind of error is shown once; all are in the results file)`;
}
