import { paretoFrontier, type ParetoObjectives, type ParetoResult } from './pareto.js';

/** One arm compared on the frontier: a run, a target or a solver, summarised by its report. */
export interface Arm {
  /** Unique label (file name, run id, target…). */
  id: string;
  accuracy_pct: number | null;
  joules_per_correct: number | null;
  usd_per_correct: number | null;
  latency_p95_ms: number | null;
  /** Source label of the energy figure (`model`, `rapl`, `mixed`…). */
  energy_source: string;
  /** Cases whose energy reading was below the meter's floor (noise-dominated). */
  below_floor_count: number;
}

/** The three trade-offs `joulebench frontier` reports. Accuracy first, so each frontier runs from most accurate. */
export const FRONTIER_AXES = {
  energy: { accuracy_pct: 'max', joules_per_correct: 'min' },
  cost: { accuracy_pct: 'max', usd_per_correct: 'min' },
  latency: { accuracy_pct: 'max', latency_p95_ms: 'min' },
} as const satisfies Record<string, ParetoObjectives>;

export type FrontierAxis = keyof typeof FRONTIER_AXES;

export interface FrontierReport {
  format: 'joulebench-frontier/1';
  arms: Arm[];
  frontiers: Record<FrontierAxis, ParetoResult>;
}

/** The Pareto-optimal arms for accuracy ↑ against J/correct ↓, $/correct ↓ and p95 latency ↓. Pure. */
export function armFrontiers(arms: readonly Arm[]): FrontierReport {
  const ids = new Set<string>();
  for (const a of arms) {
    if (ids.has(a.id)) throw new RangeError(`duplicate arm id "${a.id}"`);
    ids.add(a.id);
  }
  const points = arms.map((a) => ({
    id: a.id,
    values: {
      accuracy_pct: a.accuracy_pct,
      joules_per_correct: a.joules_per_correct,
      usd_per_correct: a.usd_per_correct,
      latency_p95_ms: a.latency_p95_ms,
    },
  }));
  const frontiers = Object.fromEntries(
    (Object.keys(FRONTIER_AXES) as FrontierAxis[]).map((axis) => [axis, paretoFrontier(points, FRONTIER_AXES[axis])]),
  ) as Record<FrontierAxis, ParetoResult>;
  return { format: 'joulebench-frontier/1', arms: [...arms], frontiers };
}
