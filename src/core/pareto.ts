/**
 * A generic Pareto frontier over points with named objectives, each maximised or minimised. Pure.
 *
 * Rules (the ones people trip on):
 * - `a` dominates `b` when `a` is at least as good on every objective and strictly better on one.
 * - Ties and duplicates: two points with equal values do not dominate each other, so exact duplicates
 *   of an optimal point are all optimal; a point equal on one objective and worse on the other is not.
 * - A point with a missing (`null`) or non-finite value on any objective cannot be placed: it is
 *   reported as `excluded`, never silently treated as 0 or infinity.
 */

/** Which way is better for one objective. */
export type ParetoDirection = 'max' | 'min';

/** The objectives, by name; insertion order is the order used to sort the frontier (first = x axis). */
export type ParetoObjectives = Readonly<Record<string, ParetoDirection>>;

/** A point: an id plus its value on each objective (`null` = unknown). */
export interface ParetoPoint {
  id: string;
  values: Readonly<Record<string, number | null | undefined>>;
}

/** What the frontier says about one point, in input order. */
export interface ParetoVerdict {
  id: string;
  /** On the frontier: no placed point dominates it. False for excluded points. */
  optimal: boolean;
  /** Ids of the points that dominate it (empty for optimal and excluded points). */
  dominated_by: string[];
  /** Why it could not be placed (a missing or non-finite objective), else null. */
  excluded: string | null;
}

export interface ParetoResult {
  objectives: Record<string, ParetoDirection>;
  /** One verdict per input point, in input order. */
  verdicts: ParetoVerdict[];
  /** Ids of optimal points, sorted along the first objective (better first), then by id: a drawable line. */
  frontier: string[];
}

/** Computes the Pareto frontier of `points` for `objectives` (at least one). O(n² · k); arms number in the tens. */
export function paretoFrontier(points: readonly ParetoPoint[], objectives: ParetoObjectives): ParetoResult {
  const names = Object.keys(objectives);
  if (names.length === 0) throw new RangeError('paretoFrontier needs at least one objective');
  const placed: { i: number; v: number[] }[] = [];
  const verdicts: ParetoVerdict[] = points.map((p, i) => {
    const missing = names.filter((n) => !isFiniteNumber(p.values[n]));
    if (missing.length > 0) {
      return { id: p.id, optimal: false, dominated_by: [], excluded: `no finite value for ${missing.join(', ')}` };
    }
    // Normalise to "bigger is better" so one comparison serves both directions.
    placed.push({ i, v: names.map((n) => (objectives[n] === 'max' ? 1 : -1) * (p.values[n] as number)) });
    return { id: p.id, optimal: true, dominated_by: [], excluded: null };
  });
  for (const a of placed) {
    for (const b of placed) {
      if (a !== b && dominates(b.v, a.v)) {
        const va = verdicts[a.i]!;
        va.optimal = false;
        va.dominated_by.push(points[b.i]!.id);
      }
    }
  }
  const first = names[0]!;
  const sign = objectives[first] === 'max' ? -1 : 1;
  const frontier = placed
    .filter((p) => verdicts[p.i]!.optimal)
    .map((p) => points[p.i]!)
    .sort((a, b) => sign * ((a.values[first] as number) - (b.values[first] as number)) || cmp(a.id, b.id))
    .map((p) => p.id);
  return { objectives: { ...objectives }, verdicts, frontier };
}

/** True when `a` is ≥ `b` everywhere and > somewhere (values already normalised to maximise). */
export function dominates(a: readonly number[], b: readonly number[]): boolean {
  let strictly = false;
  for (let k = 0; k < a.length; k++) {
    const x = a[k]!;
    const y = b[k]!;
    if (x < y) return false;
    if (x > y) strictly = true;
  }
  return strictly;
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
