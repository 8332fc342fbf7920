/** Per-solver aggregation of coding datapoints and the resolution × energy × $ frontier. Pure. */
import { paretoVerdicts, type Objective } from '../core/pareto.js';
import { median, round } from '../core/stats.js';
import type { EnergySource } from '../core/types.js';
import { energyLayers, roundLayers, windowsAsOne, type EnergyLayers, type IdleCalibration } from '../core/energy.js';
import { usdParts, type LocalPrices, type UsdParts } from '../core/usd-parts.js';
import type { Datapoint } from './oracle.js';
import { sumOrNull } from './agent-output.js';
import { taskWallsMs } from './datapoints-file.js';
import { passAtKCurve, resolutionUnderBudget, type PassAtKPoint, type TaskRollouts } from '../stats/pass-at-k.js';

/** One solver's row of the frontier table. Best-of-N: a task is resolved when any rollout resolved it. */
export interface SolverSummary extends Partial<UsdParts> {
  solver: string;
  /** Tasks attempted. */
  task_count: number;
  /** Tasks with at least one valid datapoint: the denominator of resolution_pct. */
  valid_task_count: number;
  resolved_count: number;
  /** resolved ÷ valid tasks × 100; `null` with no valid task. */
  resolution_pct: number | null;
  datapoint_count: number;
  /** Datapoints that could not count (tests passed before the solver ran). */
  invalid_count: number;
  /** Energy over every valid datapoint (all rollouts), J; `null` unless every one was measured. */
  total_joules: number | null;
  /** total_joules ÷ resolved tasks; `null` when nothing resolved or energy unknown (`joules_per_resolved_reason` says why). */
  joules_per_resolved: number | null;
  joules_per_resolved_reason: string | null;
  /** Valid datapoints whose solver window failed the meter's validity checks: their energy is never summed. */
  energy_invalid_count: number;
  /** The boundary layers of the solver windows' energy (accelerator, host, idle, facility), each J per resolved task; absent when the meter has no domains and no `--pue` was given. */
  energy_layers?: EnergyLayers;
  /** `net` (idle power × wall subtracted) when every datapoint has it, else `gross`. */
  energy_basis: 'net' | 'gross';
  energy_source: EnergySource;
  /** Valid datapoints whose energy is unknown. */
  energy_missing_count: number;
  /** Any datapoint's window was below the meter's floor: the energy figures are noise-dominated (`~`). */
  below_floor: boolean;
  below_floor_count: number;
  /** Median over tasks of the solver's wall time on that task, summed over its rollouts, ms. */
  median_wall_ms: number | null;
  total_wall_ms: number;
  /**
   * Dollars over every valid datapoint; `null` unless every one reported a cost. With an electricity or
   * hardware price, the sum of the priced parts (`usd_tokens`, `usd_energy` from `total_joules`,
   * `usd_hardware` from `total_wall_ms`), null while any priced part is unknown.
   */
  total_usd: number | null;
  usd_per_resolved: number | null;
  usd_missing_count: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  timeout_count: number;
  /** Datapoints that changed something outside their workdir (each one failed). */
  escape_count: number;
  /** Datapoints in which the solver changed a test file (restored before grading). */
  tests_modified_count: number;
  /** Processes left behind by the solver and killed. */
  stragglers_killed: number;
  /** pass@k and pass^k for k = 1…K (the fewest valid rollouts of any task), with J and $ per expected resolved task. */
  pass_at_k: PassAtKPoint[];
  /** Expensive failures: valid tasks no rollout resolved. */
  unresolved_task_count: number;
  /** Energy spent on those tasks (every rollout), J; `null` when any of it is unknown. */
  unresolved_joules: number | null;
  /** Dollars spent on those tasks; `null` when any is unknown. */
  unresolved_usd: number | null;
  /** Area under (share resolved within b J) for b in [0, budget] ÷ budget, %, over tasks; `null` without a budget or energy. */
  resolution_under_budget_pct: number | null;
  /** On the (resolution ↑, J/resolved ↓) frontier. */
  pareto_energy: boolean;
  /** On the (resolution ↑, $/resolved ↓) frontier. */
  pareto_usd: boolean;
}

/** The two frontiers of seed 002. */
export const ENERGY_FRONTIER: readonly Objective[] = [
  { name: 'resolution_pct', goal: 'max' },
  { name: 'joules_per_resolved', goal: 'min' },
];
export const USD_FRONTIER: readonly Objective[] = [
  { name: 'resolution_pct', goal: 'max' },
  { name: 'usd_per_resolved', goal: 'min' },
];

export interface SummarizeOptions {
  /** Energy budget per task attempt, J, for `resolution_under_budget_pct`; `null`/absent: no such figure. */
  energyBudgetJ?: number | null;
  /** Electricity and hardware prices: each row's dollars in parts. */
  prices?: LocalPrices;
  /** The run's idle calibration (the idle layer) and `--pue` (the modelled facility layer). */
  idle?: IdleCalibration | null;
  pue?: number;
}

/** The options a results file's config calls for (its energy budget, its prices, its idle and PUE). */
export function summaryOptionsOf(config: { energy_budget_j?: number; prices?: LocalPrices; idle?: IdleCalibration | null; pue?: number }): SummarizeOptions {
  return {
    energyBudgetJ: config.energy_budget_j ?? null,
    ...(config.prices ? { prices: config.prices } : {}),
    ...(config.idle ? { idle: config.idle } : {}),
    ...(config.pue !== undefined ? { pue: config.pue } : {}),
  };
}

/** A results document's summaries per solver, recomputed from its datapoints under its own config (budget, prices, idle, PUE). */
export function summarizeResults(results: { datapoints: readonly Datapoint[]; config: Parameters<typeof summaryOptionsOf>[0] & { solvers: readonly { id: string }[] } }): SolverSummary[] {
  return summarizeSolvers(results.datapoints, results.config.solvers.map((s) => s.id), summaryOptionsOf(results.config));
}

/** Summaries per solver, in `order` (solvers absent from it follow in first-seen order), with frontier marks. */
export function summarizeSolvers(datapoints: readonly Datapoint[], order: readonly string[] = [], opts: SummarizeOptions = {}): SolverSummary[] {
  const ids = [...order];
  for (const d of datapoints) if (!ids.includes(d.solver)) ids.push(d.solver);
  const rows = ids.map((id) => withPrices(summarizeOne(id, datapoints.filter((d) => d.solver === id), opts), opts.prices));
  const points = rows.map((r) => ({
    id: r.solver,
    values: { resolution_pct: r.resolution_pct, joules_per_resolved: r.joules_per_resolved, usd_per_resolved: r.usd_per_resolved },
  }));
  const e = paretoVerdicts(points, ENERGY_FRONTIER);
  const u = paretoVerdicts(points, USD_FRONTIER);
  rows.forEach((r, i) => {
    r.pareto_energy = e[i]?.optimal ?? false;
    r.pareto_usd = u[i]?.optimal ?? false;
  });
  return rows;
}

function summarizeOne(solver: string, dps: readonly Datapoint[], opts: SummarizeOptions): SolverSummary {
  const budgetJ = opts.energyBudgetJ ?? null;
  const tasks = unique(dps.map((d) => d.task));
  const valid = dps.filter((d) => d.valid);
  const validTasks = unique(valid.map((d) => d.task));
  const resolvedTasks = unique(valid.filter((d) => d.resolved).map((d) => d.task));
  const resolved = resolvedTasks.length;

  const useNet = valid.length > 0 && valid.every((d) => d.net_joules !== null);
  const invalidEnergy = valid.filter((d) => d.energy_validity?.valid === false);
  // Energy only from valid windows: an invalid one is unknown, so every sum over it is too.
  const energyOf = (d: Datapoint): number | null => (d.energy_validity?.valid === false ? null : useNet ? d.net_joules : d.joules);
  const joules = valid.map(energyOf);
  const energyMissing = joules.filter((j) => j === null).length;
  const total_joules = valid.length > 0 && energyMissing === 0 ? round(sum(joules as number[]), 9) : null;
  const sources = unique(valid.filter((d) => d.solver_run !== null).map((d) => d.energy_source));
  const usd = valid.map((d) => d.cost_usd);
  const usdMissing = usd.filter((c) => c === null).length;
  const total_usd = valid.length > 0 && usdMissing === 0 ? round(sum(usd as number[]), 9) : null;

  const med = median(taskWallsMs(valid));
  const rollouts: TaskRollouts[] = validTasks.map((t) => {
    const ds = valid.filter((d) => d.task === t);
    return { resolved: ds.map((d) => d.resolved), joules: ds.map(energyOf), usd: ds.map((d) => d.cost_usd) };
  });
  const failed = valid.filter((d) => !resolvedTasks.includes(d.task));
  const knownSum = (xs: readonly (number | null)[]): number | null => (xs.some((x) => x === null) ? null : round(sum(xs as number[]), 9));

  return {
    solver,
    task_count: tasks.length,
    valid_task_count: validTasks.length,
    resolved_count: resolved,
    resolution_pct: validTasks.length > 0 ? round((resolved * 100) / validTasks.length, 6) : null,
    datapoint_count: dps.length,
    invalid_count: dps.length - valid.length,
    total_joules,
    joules_per_resolved: total_joules !== null && resolved > 0 ? round(total_joules / resolved, 9) : null,
    joules_per_resolved_reason:
      invalidEnergy.length > 0
        ? `${invalidEnergy.length} solver window(s) failed the validity checks (${invalidEnergy[0]!.task}: ${invalidEnergy[0]!.energy_validity!.reasons.join('; ')})`
        : valid.length === 0
          ? 'no valid datapoint'
          : energyMissing > 0
            ? `${energyMissing} datapoint(s) without an energy reading`
            : resolved === 0
              ? 'no task resolved'
              : null,
    energy_invalid_count: invalidEnergy.length,
    ...layersOf(valid, resolved, useNet, opts),
    energy_basis: useNet ? 'net' : 'gross',
    energy_source: sources.length === 0 ? 'none' : sources.length === 1 ? sources[0]! : 'mixed',
    energy_missing_count: energyMissing,
    below_floor: valid.some((d) => d.below_floor),
    below_floor_count: valid.filter((d) => d.below_floor).length,
    median_wall_ms: med === null ? null : round(med, 3),
    total_wall_ms: round(sum(valid.map((d) => d.solver_run?.wall_ms ?? 0)), 3),
    total_usd,
    usd_per_resolved: total_usd !== null && resolved > 0 ? round(total_usd / resolved, 9) : null,
    usd_missing_count: usdMissing,
    // Tokens are informational: summed over the datapoints that reported them, `null` when none did.
    prompt_tokens: sumOrNull(valid.map((d) => d.prompt_tokens)),
    completion_tokens: sumOrNull(valid.map((d) => d.completion_tokens)),
    timeout_count: valid.filter((d) => d.solver_run?.timed_out === true).length,
    escape_count: dps.filter((d) => d.escapes.length > 0).length,
    tests_modified_count: valid.filter((d) => d.tests_modified.length > 0).length,
    stragglers_killed: sum(valid.map((d) => d.solver_run?.stragglers_killed ?? 0)),
    pass_at_k: passAtKCurve(rollouts),
    unresolved_task_count: validTasks.length - resolved,
    unresolved_joules: knownSum(failed.map(energyOf)),
    unresolved_usd: knownSum(failed.map((d) => d.cost_usd)),
    resolution_under_budget_pct: budgetJ === null ? null : resolutionUnderBudget(rollouts, budgetJ),
    pareto_energy: false,
    pareto_usd: false,
  };
}

/** The solver windows as one (invalid when any one is), in layers per resolved task. */
function layersOf(valid: readonly Datapoint[], resolved: number, net: boolean, opts: SummarizeOptions): Pick<SolverSummary, 'energy_layers'> {
  if (!valid.some((d) => d.by_domain) && opts.pue === undefined) return {};
  const window = windowsAsOne(valid.map((d) => ({ joules: d.joules, by_domain: d.by_domain ?? {}, window_ms: d.window_ms ?? 0, validity: d.energy_validity })));
  const l = roundLayers(energyLayers(window, opts.idle ?? { status: 'skipped', watts: null }, resolved, opts.pue ?? null), (v) => round(v, 9));
  return { energy_layers: { ...l, idle: l.idle === null ? null : { ...l.idle, subtracted: net } } };
}

/** The row with its dollars in parts, when a local price is given; token dollars alone otherwise. */
function withPrices(r: SolverSummary, prices: LocalPrices | undefined): SolverSummary {
  if (!prices) return r;
  const tokens_billed = r.usd_missing_count < r.datapoint_count - r.invalid_count;
  const { parts, total_usd } = usdParts({ tokens_usd: r.total_usd, tokens_billed, joules: r.total_joules, energy_source: r.energy_source, wall_ms: r.total_wall_ms }, prices);
  const usd_per_resolved = total_usd !== null && r.resolved_count > 0 ? round(total_usd / r.resolved_count, 9) : null;
  return { ...r, total_usd, usd_per_resolved, ...parts };
}

function unique<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
