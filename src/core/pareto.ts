/**
 * Pareto optimality over named objectives. Pure and generic: a point is an id plus a value per
 * objective; each objective is maximised or minimised. Shared by `joulebench code` (solvers) and any
 * other frontier (arms, targets, runs).
 */

/** Which way an objective is better. */
export type Goal = 'max' | 'min';

/** One objective: the name of a value on each point and whether more or less of it is better. */
export interface Objective {
  name: string;
  goal: Goal;
}

/** A point to rank: a label and its values by objective name; `null` (or a non-finite number) means unknown. */
export interface ParetoPoint {
  id: string;
  values: Readonly<Record<string, number | null | undefined>>;
}

/** A point's standing on one frontier. */
export interface ParetoVerdict {
  id: string;
  /** True when no other comparable point dominates it. */
  optimal: boolean;
  /** False when a value is unknown: such a point is never on the frontier and dominates nothing. */
  comparable: boolean;
  /** Ids of the points that dominate it, in input order. */
  dominated_by: string[];
}

function valueOf(p: ParetoPoint, name: string): number | null {
  const v = p.values[name];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** True when every objective of `p` is a finite number. */
export function isComparable(p: ParetoPoint, objectives: readonly Objective[]): boolean {
  return objectives.every((o) => valueOf(p, o.name) !== null);
}

/**
 * True when `a` dominates `b`: at least as good on every objective and strictly better on one.
 * Points with an unknown value neither dominate nor are dominated. Equal points do not dominate
 * each other, so duplicates share the frontier.
 */
export function dominates(a: ParetoPoint, b: ParetoPoint, objectives: readonly Objective[]): boolean {
  if (objectives.length === 0) return false;
  let strictly = false;
  for (const o of objectives) {
    const va = valueOf(a, o.name);
    const vb = valueOf(b, o.name);
    if (va === null || vb === null) return false;
    const better = o.goal === 'max' ? va - vb : vb - va;
    if (better < 0) return false;
    if (better > 0) strictly = true;
  }
  return strictly;
}

/** Each point's verdict, in input order. O(n²), which is fine for tens of solvers or arms. */
export function paretoVerdicts(points: readonly ParetoPoint[], objectives: readonly Objective[]): ParetoVerdict[] {
  return points.map((p, i) => {
    const comparable = isComparable(p, objectives);
    const dominated_by = comparable
      ? points.filter((q, j) => j !== i && dominates(q, p, objectives)).map((q) => q.id)
      : [];
    return { id: p.id, optimal: comparable && dominated_by.length === 0, comparable, dominated_by };
  });
}

/** The Pareto-optimal points, in input order. */
export function paretoFront<P extends ParetoPoint>(points: readonly P[], objectives: readonly Objective[]): P[] {
  const verdicts = paretoVerdicts(points, objectives);
  return points.filter((_p, i) => verdicts[i]?.optimal === true);
}
