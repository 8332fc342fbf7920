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
  // Accuracy is comparable only over the same questions, and joules only from the same kind of meter.
  // Rather than rank one cascade "dominated" by itself under another meter, the largest comparable
  // group is ranked and every other arm is withheld with the reason.
  const byAsked = largestGroup(arms, (a) => a.asked ?? null);
  const askedElse = (a: Arm): string =>
    byAsked.key === null
      ? `not comparable: the arms answered different questions (${byAsked.groups} different suites or task sets, none the majority)`
      : `not comparable: answered different questions (${describeAsked(a.asked)}) from the ranked arms (${describeAsked(byAsked.key)})`;
  const frontiers = Object.fromEntries(
    (Object.keys(FRONTIER_AXES) as FrontierAxis[]).map((axis) => {
      const objectives = FRONTIER_AXES[axis];
      const excluded = new Map(byAsked.outside.map((a) => [a.id, askedElse(a)]));
      let ranked = byAsked.inside;
      if (axis === 'energy') {
        const withJoules = ranked.filter((a) => a.joules_per_correct !== null);
        const bySource = largestGroup(withJoules, (a) => a.energy_source);
        const sources = [...new Set(withJoules.map((a) => a.energy_source))].sort();
        for (const a of bySource.outside) {
          excluded.set(
            a.id,
            bySource.key === null
              ? `not comparable: the arms' energy was measured by different sources (${sources.join(', ')}), none the majority`
              : `not comparable: energy measured by ${a.energy_source}, the ranked arms' by ${bySource.key}`,
          );
        }
        ranked = ranked.filter((a) => !excluded.has(a.id));
      }
      const inner = rankedFrontier(points.filter((p) => ranked.some((a) => a.id === p.id)), objectives);
      const verdictOf = new Map(inner.verdicts.map((v) => [v.id, v]));
      const verdicts = arms.map((a) => {
        const why = excluded.get(a.id);
        if (why !== undefined) return { id: a.id, optimal: false, comparable: false, dominated_by: [], excluded: why };
        return verdictOf.get(a.id)!;
      });
      return [axis, { objectives: [...objectives], verdicts, frontier: inner.frontier }];
    }),
  ) as Record<FrontierAxis, RankedFrontier>;
  return { format: 'joulebench-frontier/1', arms: [...arms], frontiers };
}

/**
 * Splits arms by `key` and keeps the one largest group; arms whose key is null stay with it (nothing
 * says they differ). When two groups tie for largest there is no honest choice: every keyed arm is
 * outside, and `key` is null.
 */
function largestGroup(arms: readonly Arm[], key: (a: Arm) => string | null): { key: string | null; groups: number; inside: Arm[]; outside: Arm[] } {
  const counts = new Map<string, number>();
  for (const a of arms) {
    const k = key(a);
    if (k !== null) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [k, n] of counts) if (best === null || n > counts.get(best)!) best = k;
  const tie = best !== null && [...counts.values()].filter((n) => n === counts.get(best!)).length > 1;
  if (tie) best = null;
  const inside = arms.filter((a) => key(a) === null || (best !== null && key(a) === best));
  return { key: best, groups: counts.size, inside, outside: arms.filter((a) => !inside.includes(a)) };
}

function describeAsked(asked: string | null | undefined): string {
  if (!asked) return 'unknown';
  return asked.startsWith('sha256:') ? `suite ${asked.slice(0, 19)}…` : asked.length > 40 ? `${asked.slice(0, 40)}…` : asked;
}
