import { pc } from './colors.js';
import type { CodeResults } from '../code/results.js';
import { fmtJoules, fmtPct, fmtUsd, table } from './format.js';

/** The solvers' resolution, energy and $ table: `~` marks energy below the meter's floor, `E`/`$` the Pareto-optimal. */
export function renderCodeTable(r: CodeResults): string {
  const sandbox = String(r.config.sandbox.kind ?? '?');
  const lines = [
    pc.bold(`joulebench code · suite ${r.suite.name}`) +
      pc.dim(` (${r.suite.tasks.length} tasks${r.suite.digest ? `, ${r.suite.digest.slice(0, 19)}…` : ''})`) +
      ` · rollouts ${r.config.rollouts} (best-of-${r.config.rollouts}) · sandbox ${sandbox}${r.config.runner ? ` · tests in ${r.config.runner.kind}` : ''} · meter ${r.config.meter.id}`,
    '',
  ];
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
  lines.push(table(rows), '', ...passAtKLines(r));
  const sources = [...new Set(r.solvers.map((s) => `${s.energy_source}${s.energy_basis === 'net' ? ' net of idle' : ''}`))].join(', ');
  lines.push(pc.dim(`  energy: ${sources}; J/resolved = energy over all rollouts ÷ tasks resolved; n/a = unknown or nothing resolved`));
  lines.push(pc.dim('  frontier: E = Pareto-optimal on (resolution ↑, J/resolved ↓), $ = on (resolution ↑, $/resolved ↓)'));
  for (const s of r.solvers) {
    if (s.unresolved_task_count === 0) continue;
    const j = s.unresolved_joules === null ? 'energy unknown' : `${s.below_floor ? '~' : ''}${fmtJoules(s.unresolved_joules)}`;
    lines.push(pc.dim(`  expensive failures: ${s.solver}: ${s.unresolved_task_count} task(s) never resolved took ${j}, ${fmtUsd(s.unresolved_usd)} (in the totals above, resolving nothing)`));
  }
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

/** pass@k and pass^k for k = 1…K with J and $ per expected resolved task, and resolution under the energy budget. */
function passAtKLines(r: CodeResults): string[] {
  const lines: string[] = [];
  const budget = r.config.energy_budget_j;
  if (r.solvers.some((s) => s.pass_at_k.length >= 2)) {
    const rows: string[][] = [['solver', 'k', 'pass@k', 'pass^k', 'J/resolved@k', '$/resolved@k', 'J/resolved^k'].map((h) => pc.dim(h))];
    for (const s of r.solvers) {
      const tilde = s.below_floor ? '~' : '';
      for (const p of s.pass_at_k) {
        rows.push([
          p.k === 1 ? s.solver : '',
          String(p.k),
          fmtPct(p.pass_at_k_pct),
          fmtPct(p.pass_hat_k_pct),
          p.joules_per_resolved === null ? 'n/a' : tilde + fmtJoules(p.joules_per_resolved),
          fmtUsd(p.usd_per_resolved),
          p.joules_per_resolved_all_k === null ? 'n/a' : tilde + fmtJoules(p.joules_per_resolved_all_k),
        ]);
      }
    }
    lines.push(table(rows), '');
    lines.push(pc.dim('  pass@k: any of k rollouts resolves (unbiased, Chen et al. 2021); pass^k: all k do; J/resolved@k = expected J of k rollouts per task ÷ expected tasks resolved'));
  }
  if (budget !== undefined) {
    const parts = r.solvers.map((s) => `${s.solver} ${fmtPct(s.resolution_under_budget_pct)}`);
    lines.push(pc.dim(`  resolution under ${fmtJoules(budget)} per attempt (area under resolved vs J ÷ budget): `) + parts.join(', '));
  }
  return lines;
}

function fmtWall(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 1) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(2)} ms`;
}
