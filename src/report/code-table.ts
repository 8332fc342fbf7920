import { pc } from './colors.js';
import type { CodeResults } from '../code/results.js';
import { fmtJoules, fmtPct, fmtUsd, table } from './format.js';

/**
 * The resolution × energy × $ frontier table. `~` marks energy measured over windows shorter than the
 * meter's floor (noise-dominated, not comparable); `E` and `$` mark the Pareto-optimal solvers.
 */
export function renderCodeTable(r: CodeResults): string {
  const lines: string[] = [];
  const sandbox = String(r.config.sandbox.kind ?? '?');
  lines.push(
    pc.bold(`joulebench code · suite ${r.suite.name}`) +
      pc.dim(` (${r.suite.tasks.length} tasks${r.suite.digest ? `, ${r.suite.digest.slice(0, 19)}…` : ''})`) +
      ` · rollouts ${r.config.rollouts} (best-of-${r.config.rollouts}) · sandbox ${sandbox}${r.config.runner ? ` · tests in ${r.config.runner.kind}` : ''} · meter ${r.config.meter.id}`,
  );
  lines.push('');
  const rows: string[][] = [
    ['solver', 'resolved', 'resolution', 'J/resolved', 'total J', 'median wall', '$/resolved', 'total $', 'invalid', 'frontier'].map((h) => pc.dim(h)),
  ];
  for (const s of r.solvers) {
    const tilde = s.below_floor ? '~' : '';
    rows.push([
      s.solver,
      // Nothing valid (a missing agent, a task that does not reproduce): `invalid`, never a 0 % row.
      s.valid_task_count === 0 ? 'invalid' : `${s.resolved_count}/${s.valid_task_count}`,
      s.valid_task_count === 0 ? 'invalid' : fmtPct(s.resolution_pct),
      s.joules_per_resolved === null ? 'n/a' : tilde + fmtJoules(s.joules_per_resolved),
      s.total_joules === null ? 'n/a' : tilde + fmtJoules(s.total_joules),
      s.median_wall_ms === null ? 'n/a' : fmtWall(s.median_wall_ms),
      fmtUsd(s.usd_per_resolved),
      fmtUsd(s.total_usd),
      String(s.invalid_count),
      [s.pareto_energy ? 'E' : '', s.pareto_usd ? '$' : ''].filter(Boolean).join(' ') || '·',
    ]);
  }
  lines.push(table(rows));
  lines.push('');
  const sources = [...new Set(r.solvers.map((s) => `${s.energy_source}${s.energy_basis === 'net' ? ' net of idle' : ''}`))].join(', ');
  lines.push(pc.dim(`  energy: ${sources}; J/resolved = energy over all rollouts ÷ tasks resolved; n/a = unknown or nothing resolved`));
  lines.push(pc.dim('  frontier: E = Pareto-optimal on (resolution ↑, J/resolved ↓), $ = on (resolution ↑, $/resolved ↓)'));
  if (r.solvers.some((s) => s.below_floor)) {
    lines.push(pc.yellow("  ~ below the meter's floor: the window was too short to resolve; energy noise-dominated, resolution still valid"));
  }
  const notes: string[] = [];
  for (const s of r.solvers) {
    if (s.escape_count > 0) notes.push(pc.red(`  ${s.solver}: ${s.escape_count} datapoint(s) changed files outside the workdir (failed)`));
    if (s.timeout_count > 0) notes.push(pc.yellow(`  ${s.solver}: ${s.timeout_count} run(s) timed out (process tree killed)`));
    if (s.tests_modified_count > 0) notes.push(pc.yellow(`  ${s.solver}: edited the tests in ${s.tests_modified_count} run(s) (restored before grading)`));
    const hits = r.datapoints.filter((d) => d.solver === s.solver && d.cache === 'hit').length;
    if (hits > 0) notes.push(pc.dim(`  ${s.solver}: ${hits} of ${s.datapoint_count} datapoint(s) replayed a cached fix (no agent run)`));
    if (s.stragglers_killed > 0) notes.push(pc.dim(`  ${s.solver}: ${s.stragglers_killed} leftover process(es) killed`));
    if (s.invalid_count > 0) {
      const reasons = [...new Set(r.datapoints.filter((d) => d.solver === s.solver && !d.valid).map((d) => d.invalid_reason ?? 'invalid'))];
      notes.push(pc.yellow(`  ${s.solver}: ${s.invalid_count} invalid datapoint(s), not counted: ${reasons.join('; ')}`));
    }
  }
  if (notes.length > 0) lines.push('', ...notes);
  return lines.join('\n') + '\n';
}

function fmtWall(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(2)} ms`;
}
