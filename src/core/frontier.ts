import { isComparable, paretoVerdicts, type Objective, type ParetoPoint, type ParetoVerdict } from './pareto.js';

/**
 * A Pareto frontier ready to print or draw, on top of the generic `paretoVerdicts`:
 * - ties do not dominate, so exact duplicates of an optimal point are all optimal;
 * - a point with an unknown (`null`) or non-finite value is never placed, and says which value it lacks.
 */
export interface RankedFrontier {
  objectives: Objective[];
  /** One verdict per input point, in input order, with why it could not be placed (else null). */
  verdicts: (ParetoVerdict & { excluded: string | null })[];
  /** Ids of optimal points sorted along the first objective (better first), then by id: a drawable line. */
  frontier: string[];
}

/** The frontier of `points` for `objectives` (at least one), with the reasons. Pure. */
export function rankedFrontier(points: readonly ParetoPoint[], objectives: readonly Objective[]): RankedFrontier {
  const first = objectives[0];
  if (!first) throw new RangeError('a frontier needs at least one objective');
  const verdicts = paretoVerdicts(points, objectives).map((v, i) => {
    const p = points[i]!;
    const missing = isComparable(p, objectives) ? [] : objectives.filter((o) => !isComparable(p, [o])).map((o) => o.name);
    return { ...v, excluded: missing.length ? `no finite value for ${missing.join(', ')}` : null };
  });
  const sign = first.goal === 'max' ? -1 : 1;
  const frontier = points
    .filter((_p, i) => verdicts[i]!.optimal)
    .sort((a, b) => sign * ((a.values[first.name] as number) - (b.values[first.name] as number)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((p) => p.id);
  return { objectives: [...objectives], verdicts, frontier };
}

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
  /** What was asked (a suite digest, or a coding suite and its tasks); arms that asked different things share no frontier. */
  asked?: string | null;
}

/** The three trade-offs `joulebench frontier` reports. Accuracy first, so each frontier runs from most accurate. */
export const FRONTIER_AXES = {
  energy: [{ name: 'accuracy_pct', goal: 'max' }, { name: 'joules_per_correct', goal: 'min' }],
  cost: [{ name: 'accuracy_pct', goal: 'max' }, { name: 'usd_per_correct', goal: 'min' }],
  latency: [{ name: 'accuracy_pct', goal: 'max' }, { name: 'latency_p95_ms', goal: 'min' }],
} as const satisfies Record<string, readonly Objective[]>;

export type FrontierAxis = keyof typeof FRONTIER_AXES;

export interface FrontierReport {
  format: 'joulebench-frontier/1';
  arms: Arm[];
  frontiers: Record<FrontierAxis, RankedFrontier>;
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
  // Accuracy is comparable only over the same questions, and joules only from the same kind of meter:
  // rather than rank one cascade "dominated" by itself under another meter, such a frontier is withheld.
  const asked = new Set(arms.map((a) => a.asked).filter((d): d is string => typeof d === 'string'));
  const differentQuestions = asked.size > 1 ? `the arms answered different questions (${asked.size} different suites or task sets)` : null;
  const sources = new Set(arms.filter((a) => a.joules_per_correct !== null).map((a) => a.energy_source));
  const differentMeters = sources.size > 1 ? `the arms' energy was measured by different sources (${[...sources].sort().join(', ')})` : null;
  const frontiers = Object.fromEntries(
    (Object.keys(FRONTIER_AXES) as FrontierAxis[]).map((axis) => {
      const why = differentQuestions ?? (axis === 'energy' ? differentMeters : null);
      return [axis, why ? withheld(arms, FRONTIER_AXES[axis], why) : rankedFrontier(points, FRONTIER_AXES[axis])];
    }),
  ) as Record<FrontierAxis, RankedFrontier>;
  return { format: 'joulebench-frontier/1', arms: [...arms], frontiers };
}

/** A frontier that cannot be drawn honestly: every arm unplaced, with the reason. */
function withheld(arms: readonly Arm[], objectives: readonly Objective[], why: string): RankedFrontier {
  return {
    objectives: [...objectives],
    verdicts: arms.map((a) => ({ id: a.id, optimal: false, comparable: false, dominated_by: [], excluded: `not comparable: ${why}` })),
    frontier: [],
  };
}
