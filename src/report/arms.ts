import type { SolverSummary } from '../code/aggregate.js';
import { taskWallsMs } from '../code/datapoints-file.js';
import type { CodeResults } from '../code/results.js';
import { armFrontiers, type Arm, type FrontierReport } from '../core/frontier.js';
import { nearestRank } from '../core/stats.js';
import { armOf } from './frontier-table.js';
import type { ReportInput } from './inputs.js';

/** Why an infer arm is never placed on an accuracy frontier (the page and `frontier` both say it). */
export const INFER_NOT_PLACED =
  'infer arm: no accuracy (it times a fixed prompt; nothing is graded), so it has no place on an accuracy frontier; see its throughput and first-token numbers instead';

/** An arm that was loaded but is not on any frontier, and why. */
export interface NotPlacedArm {
  id: string;
  kind: 'infer';
  reason: string;
}

/** The frontier over every input, plus the arms that cannot be placed on it. */
export interface InputsFrontier extends FrontierReport {
  /** Where each arm came from: `suite` (a run), `code` (a solver), by arm id. */
  arm_kinds: Record<string, 'suite' | 'code'>;
  not_placed: NotPlacedArm[];
  /** Code arms only (absent without one): each solver's pass@k curve, expensive failures and resolution under its budget. */
  code_curves?: Record<string, CodeCurve>;
}

/** What a code arm adds beyond best-of-N (see SolverSummary). */
export type CodeCurve = Pick<SolverSummary, 'pass_at_k' | 'unresolved_task_count' | 'unresolved_joules' | 'unresolved_usd' | 'resolution_under_budget_pct'>;

/**
 * Arms of a coding-agent results file, one per solver: accuracy = resolution %, J and $ per resolved task,
 * p95 = nearest-rank p95 of the solver's wall time per task (its valid rollouts summed).
 */
export function codeArms(label: string, r: CodeResults): Arm[] {
  return r.solvers.map((s) => {
    const walls = taskWallsMs(r.datapoints.filter((d) => d.solver === s.solver && d.valid));
    return {
      id: `${label} · ${s.solver}`,
      accuracy_pct: s.resolution_pct,
      joules_per_correct: s.joules_per_resolved,
      usd_per_correct: s.usd_per_resolved,
      latency_p95_ms: nearestRank(walls, 95),
      energy_source: s.energy_source + (s.energy_basis === 'net' ? ' net' : ''),
      below_floor_count: s.below_floor_count,
      asked: r.suite.digest ?? `${r.suite.name}:${[...r.suite.tasks].sort().join(',')}`,
    };
  });
}

/** Ids of an infer file's arms as the report shows them: `label · model@t=…`. */
export function inferArmIds(label: string, armIds: readonly string[]): string[] {
  return armIds.map((id) => `${label} · ${id}`);
}

/** Suite runs and code solvers as arms on the three frontiers; infer arms listed as not placed, with the reason. */
export function inputsFrontier(inputs: readonly ReportInput[]): InputsFrontier {
  const arms: Arm[] = [];
  const kinds: Record<string, 'suite' | 'code'> = {};
  const notPlaced: NotPlacedArm[] = [];
  const curves: Record<string, CodeCurve> = {};
  for (const input of inputs) {
    if (input.kind === 'suite') {
      const a = armOf(input);
      arms.push(a);
      kinds[a.id] = 'suite';
    } else if (input.kind === 'code') {
      const solvers = input.results.solvers;
      codeArms(input.label, input.results).forEach((a, i) => {
        arms.push(a);
        kinds[a.id] = 'code';
        const { pass_at_k, unresolved_task_count, unresolved_joules, unresolved_usd, resolution_under_budget_pct } = solvers[i]!;
        curves[a.id] = { pass_at_k, unresolved_task_count, unresolved_joules, unresolved_usd, resolution_under_budget_pct };
      });
    } else {
      for (const id of inferArmIds(input.label, input.file.arms.map((a) => a.id))) notPlaced.push({ id, kind: 'infer', reason: INFER_NOT_PLACED });
    }
  }
  return { ...armFrontiers(arms), arm_kinds: kinds, not_placed: notPlaced, ...(Object.keys(curves).length > 0 ? { code_curves: curves } : {}) };
}
