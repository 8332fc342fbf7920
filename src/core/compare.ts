import { pctChange, round } from './stats.js';

/** The three numbers `compare` reads from each report. */
export interface CompareSide {
  joules_per_correct: number | null;
  latency_p95_ms: number | null;
  accuracy_pct: number | null;
}

/** The comparison `joulebench compare` prints (EOC v0 §6; DESIGN.md "Report schema"). */
export interface Comparison {
  baseline: CompareSide;
  candidate: CompareSide;
  /** `(cand − base) × 100 / base`; negative is better; null when the base is 0 or not finite. */
  joules_per_correct_pct: number | null;
  /** Same rule for p95 latency; negative is better. */
  latency_p95_pct: number | null;
  /** Plain difference in accuracy points; positive is better; null when either side is null. */
  accuracy_pp_delta: number | null;
}

/** Compares two reports. Pure. */
export function compare(baseline: CompareSide, candidate: CompareSide): Comparison {
  const pick = (r: CompareSide): CompareSide => ({
    joules_per_correct: r.joules_per_correct,
    latency_p95_ms: r.latency_p95_ms,
    accuracy_pct: r.accuracy_pct,
  });
  const jpc = pctChange(baseline.joules_per_correct, candidate.joules_per_correct);
  const p95 = pctChange(baseline.latency_p95_ms, candidate.latency_p95_ms);
  const acc =
    baseline.accuracy_pct === null || candidate.accuracy_pct === null
      ? null
      : candidate.accuracy_pct - baseline.accuracy_pct;
  return {
    baseline: pick(baseline),
    candidate: pick(candidate),
    joules_per_correct_pct: jpc === null ? null : round(jpc, 4),
    latency_p95_pct: p95 === null ? null : round(p95, 4),
    accuracy_pp_delta: acc === null ? null : round(acc, 4),
  };
}
