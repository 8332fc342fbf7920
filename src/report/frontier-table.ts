import { pc } from './colors.js';
import type { Arm, FrontierAxis, FrontierReport } from '../core/frontier.js';
import { fmtJoules, fmtMs, fmtPct, fmtUsd, table } from './format.js';
import type { CodeCurve, NotPlacedArm } from './arms.js';
import type { LoadedRun } from './inputs.js';

/** A loaded run as a frontier arm. Reports of other kinds fall back to their closest fields. */
export function armOf(run: LoadedRun): Arm {
  const r = run.report as unknown as Record<string, unknown>;
  const num = (k: string): number | null => (typeof r[k] === 'number' && Number.isFinite(r[k]) ? (r[k] as number) : null);
  return {
    id: run.label,
    accuracy_pct: num('accuracy_pct') ?? num('resolution_pct'),
    joules_per_correct: num('joules_per_correct') ?? num('joules_per_resolved'),
    usd_per_correct: num('usd_per_correct') ?? num('usd_per_resolved'),
    latency_p95_ms: num('latency_p95_ms'),
    energy_source: typeof r.energy_source === 'string' ? r.energy_source : 'none',
    below_floor_count: num('below_floor_count') ?? 0,
    asked: typeof (r.suite as { digest?: unknown } | undefined)?.digest === 'string' ? (r.suite as { digest: string }).digest : null,
  };
}

const AXIS_TITLE: Record<FrontierAxis, string> = {
  energy: 'accuracy ↑ vs J/correct ↓',
  cost: 'accuracy ↑ vs $/correct ↓',
  latency: 'accuracy ↑ vs p95 latency ↓',
};

/** The frontier for a terminal: every arm, then per trade-off which arms are optimal (★) and why others are not. */
export function renderFrontierTable(f: FrontierReport): string {
  const lines: string[] = [];
  const head = ['arm', 'accuracy', 'J / correct', '$ / correct', 'p95', 'J', '$', 'p95'].map((h) => pc.dim(h));
  const energy = (a: Arm): string => {
    const floor = a.below_floor_count > 0 ? pc.yellow(` ⚠${a.below_floor_count} below floor`) : '';
    return `${fmtJoules(a.joules_per_correct)} ${pc.dim(`[${a.energy_source}]`)}${floor}`;
  };
  lines.push(table([head, ...frontierRows(f, energy, [pc.dim('n/a'), pc.green('★'), pc.dim('·')])]));
  lines.push('');
  for (const axis of Object.keys(AXIS_TITLE) as FrontierAxis[]) {
    const fr = f.frontiers[axis];
    const front = fr.frontier.length ? fr.frontier.join(', ') : pc.dim(`(none placed: ${whyEmpty(fr)})`);
    lines.push(`  ${pc.bold(AXIS_TITLE[axis])}: ${front}`);
    for (const v of fr.verdicts) {
      if (v.excluded) lines.push(pc.dim(`    ${v.id}: not placed, ${v.excluded}`));
      else if (!v.optimal) lines.push(pc.dim(`    ${v.id}: dominated by ${v.dominated_by.join(', ')}`));
    }
  }
  return lines.join('\n') + '\n';
}

/**
 * One row per arm: id, accuracy, J / correct as `energy` writes it, $ / correct, p95, then its mark on each
 * trade-off (energy, cost, latency): `marks` is [not placed, optimal, dominated].
 */
export function frontierRows(f: FrontierReport, energy: (a: Arm) => string, marks: readonly [string, string, string]): string[][] {
  const [excluded, optimal, dominated] = marks;
  return f.arms.map((a) => [
    a.id,
    fmtPct(a.accuracy_pct),
    energy(a),
    fmtUsd(a.usd_per_correct),
    fmtMs(a.latency_p95_ms),
    ...(['energy', 'cost', 'latency'] as const).map((axis) => {
      const v = f.frontiers[axis].verdicts.find((x) => x.id === a.id);
      return v?.excluded ? excluded : v?.optimal ? optimal : dominated;
    }),
  ]);
}

/** The arms loaded but not placed on any frontier (infer arms), each with its reason; empty when none. */
export function renderNotPlaced(list: readonly NotPlacedArm[], as: 'text' | 'md'): string {
  if (list.length === 0) return '';
  const reasons = [...new Set(list.map((a) => a.reason))];
  const ids = list.map((a) => a.id).join(', ');
  if (as === 'md') return `\n_Not on any frontier: ${ids} — ${reasons.join('; ')}._\n`;
  return `\n  ${pc.bold('not placed')}: ${ids}\n${reasons.map((r) => pc.dim(`    ${r}`)).join('\n')}\n`;
}

/** Code arms beyond best-of-N: pass@k / pass^k with J per resolved, expensive failures, resolution under budget. */
export function renderCodeCurves(curves: Record<string, CodeCurve> | undefined): string {
  if (!curves) return '';
  const lines: string[] = ['', `  ${pc.bold('code arms: pass@k / pass^k over the same rollouts')} ${pc.dim('(J/resolved@k = expected J of k rollouts per task ÷ expected resolved)')}`];
  for (const [id, c] of Object.entries(curves)) {
    const pts = c.pass_at_k.map((p) => `k=${p.k} ${fmtPct(p.pass_at_k_pct)} / ${fmtPct(p.pass_hat_k_pct)} ${fmtJoules(p.joules_per_resolved)}`).join(' · ');
    lines.push(`    ${id}: ${pts || pc.dim('no valid task')}`);
    const extra: string[] = [];
    if (c.unresolved_task_count > 0) extra.push(`expensive failures ${c.unresolved_task_count} task(s), ${fmtJoules(c.unresolved_joules)}, ${fmtUsd(c.unresolved_usd)}`);
    if (c.resolution_under_budget_pct !== null) extra.push(`resolution under budget ${fmtPct(c.resolution_under_budget_pct)}`);
    if (extra.length > 0) lines.push(pc.dim(`      ${extra.join('; ')}`));
  }
  return lines.join('\n') + '\n';
}

/** Why a frontier has no arm: the one reason every arm shares, else the distinct reasons. */
function whyEmpty(fr: { verdicts: readonly { excluded: string | null }[] }): string {
  const reasons = [...new Set(fr.verdicts.map((v) => v.excluded).filter((r): r is string => r !== null))];
  if (fr.verdicts.length === 0) return 'no arms';
  if (reasons.length === 0) return 'no arm has both figures';
  return reasons.length === 1 ? reasons[0]!.replace(/^not comparable: /, 'not comparable, ') : `${reasons.length} different reasons, listed below`;
}
