import type { CaseResult } from '../core/types.js';
import type { BenchReport } from '../core/aggregate.js';

/** Lines shown after a run whatever `--quiet` says: why a figure is n/a when the numbers alone do not show it. */
export function reportWarnings(
  r: Pick<BenchReport, 'cost_unknown_count' | 'total_usd' | 'target' | 'case_count' | 'usd_tokens_source' | 'usd_energy' | 'electricity_usd_per_kwh' | 'usd_hardware' | 'hardware_usd_per_hour'>,
): string[] {
  const out: string[] = [];
  if (r.total_usd !== null) return out;
  // With an electricity or hardware price the parts say which one is missing; tokens are a part only when some case was billed.
  const parts = r.electricity_usd_per_kwh !== undefined;
  if (r.cost_unknown_count > 0 && (!parts || r.usd_tokens_source != null)) {
    out.push(
      `cost unknown for ${r.cost_unknown_count} of ${r.case_count} case(s) of ${r.target}: tokens were used but no price bills them ` +
        '(set prices.input_usd_per_mtok and prices.output_usd_per_mtok in the config; 0 for a free model)',
    );
  }
  if (parts && r.electricity_usd_per_kwh !== null && r.usd_energy === null) {
    out.push(`cost unknown for ${r.target}: an electricity price is set but the run has no energy figure (see energy source and J/correct above)`);
  }
  if (parts && r.hardware_usd_per_hour !== null && r.usd_hardware === null) {
    out.push(`cost unknown for ${r.target}: a hardware price is set but the run states no wall time (a resumed run has none)`);
  }
  return out;
}

/** The line shown the first time a kind of target failure happens: case, code, HTTP status, cause. */
export function firstErrorLine(r: Pick<CaseResult, 'case_id' | 'phase' | 'error'>): string {
  const e = r.error;
  if (!e) return '';
  return `target error on case "${r.case_id}"${r.phase === 'warmup' ? ' (warmup)' : ''}: ${e.code}${e.status !== undefined ? ` (HTTP ${e.status})` : ''}: ${e.message} (each kind of error is shown once; all are in the results file)`;
}
