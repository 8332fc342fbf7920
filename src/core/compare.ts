import { pctChange, round } from './stats.js';

/** The numbers `compare` reads from each report (the energy labels are optional for older files). */
export interface CompareSide {
  joules_per_correct: number | null;
  latency_p95_ms: number | null;
  accuracy_pct: number | null;
  /** Optional for reports that predate dollars. */
  usd_per_correct?: number | null;
  total_usd?: number | null;
  energy_source?: string;
  energy_sources?: Record<string, number>;
}

/** The comparison `joulebench compare` prints (EOC v0 §6; DESIGN.md "Report schema"), then extras. */
export interface Comparison {
  baseline: CompareSide;
  candidate: CompareSide;
  /**
   * `(cand − base) × 100 / base`; negative is better; 0 when both are 0; null when only the base is 0,
   * either is absent or not finite, or when the two energies have different sources (a model's joules against a meter's are not a change).
   */
  joules_per_correct_pct: number | null;
  /** Same rule for p95 latency; negative is better. */
  latency_p95_pct: number | null;
  /** Plain difference in accuracy points; positive is better; null when either side is null. */
  accuracy_pp_delta: number | null;
  /** Same rule for dollars per correct answer; negative is better. */
  usd_per_correct_pct: number | null;
  /** Same rule for the dollars the scored cases cost in all; negative is better. */
  total_usd_pct: number | null;
  /** False when the energy sources differ (then `joules_per_correct_pct` is null); null when a side does not say. */
  energy_sources_match: boolean | null;
}

/** Compares two reports. Pure. */
export function compare(baseline: CompareSide, candidate: CompareSide): Comparison {
  const pick = (r: CompareSide): CompareSide => ({
    joules_per_correct: r.joules_per_correct,
    latency_p95_ms: r.latency_p95_ms,
    accuracy_pct: r.accuracy_pct,
    ...(r.usd_per_correct !== undefined ? { usd_per_correct: r.usd_per_correct } : {}),
    ...(r.total_usd !== undefined ? { total_usd: r.total_usd } : {}),
    ...(r.energy_source !== undefined ? { energy_source: r.energy_source } : {}),
  });
  const match = sourcesMatch(baseline, candidate);
  const round4 = (v: number | null) => (v === null ? null : round(v, 4));
  return {
    baseline: pick(baseline),
    candidate: pick(candidate),
    joules_per_correct_pct: match === false ? null : round4(pctChange(baseline.joules_per_correct, candidate.joules_per_correct)),
    latency_p95_pct: round4(pctChange(baseline.latency_p95_ms, candidate.latency_p95_ms)),
    accuracy_pp_delta:
      baseline.accuracy_pct === null || candidate.accuracy_pct === null ? null : round(candidate.accuracy_pct - baseline.accuracy_pct, 4),
    usd_per_correct_pct: round4(pctChange(baseline.usd_per_correct ?? null, candidate.usd_per_correct ?? null)),
    total_usd_pct: round4(pctChange(baseline.total_usd ?? null, candidate.total_usd ?? null)),
    energy_sources_match: match,
  };
}

/** Same label, and for `mixed` the same set of parts; null when either side does not say. */
function sourcesMatch(a: CompareSide, b: CompareSide): boolean | null {
  if (a.energy_source === undefined || b.energy_source === undefined) return null;
  if (a.energy_source !== b.energy_source) return false;
  if (a.energy_source !== 'mixed') return true;
  const keys = (s: CompareSide) => Object.keys(s.energy_sources ?? {}).sort().join(',');
  return keys(a) === keys(b);
}
