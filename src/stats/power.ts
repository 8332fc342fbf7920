/** Sample sizes for paired comparisons, planned from a pilot run. Pure; deterministic. */
import { normalQuantile } from './normal.js';
import { sampleSd } from './student-t.js';

function checkAlphaPower(alpha: number, power: number): void {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!(power > 0 && power < 1)) throw new RangeError(`power must be in (0, 1), got ${power}`);
}

/**
 * Pairs a two-sided McNemar test needs (Connor 1987): with ψ the share of discordant pairs and δ the
 * difference in proportions to detect, n = ⌈(z₁₋α/₂·√ψ + z₁₋β·√(ψ − δ²))² / δ²⌉. Needs 0 < |δ| ≤ ψ ≤ 1.
 */
export function mcnemarSampleSize(opts: { discordance: number; delta: number; alpha: number; power: number }): number {
  const { discordance: psi, alpha, power } = opts;
  const delta = Math.abs(opts.delta);
  checkAlphaPower(alpha, power);
  if (!(delta > 0 && delta <= 1)) throw new RangeError(`mcnemarSampleSize: the difference must be in (0, 1], got ${opts.delta}`);
  if (!(psi >= delta && psi <= 1)) throw new RangeError(`mcnemarSampleSize: the discordance (${psi}) must lie between the difference (${delta}) and 1`);
  const za = normalQuantile(1 - alpha / 2);
  const zb = normalQuantile(power);
  return Math.ceil(((za * Math.sqrt(psi) + zb * Math.sqrt(psi - delta * delta)) ** 2) / (delta * delta) - 1e-9);
}

/** Pairs a two-sided paired t test needs: ⌈((z₁₋α/₂ + z₁₋β)·σ_d/Δ)² + z²₁₋α/₂/2⌉ (Guenther 1981). */
export function pairedMeanSampleSize(opts: { sdDiff: number; delta: number; alpha: number; power: number }): number {
  const { sdDiff, alpha, power } = opts;
  const delta = Math.abs(opts.delta);
  checkAlphaPower(alpha, power);
  if (!(delta > 0 && Number.isFinite(delta))) throw new RangeError(`pairedMeanSampleSize: the difference must be a positive number, got ${opts.delta}`);
  if (!(sdDiff >= 0 && Number.isFinite(sdDiff))) throw new RangeError(`pairedMeanSampleSize: the SD must be ≥ 0, got ${sdDiff}`);
  const za = normalQuantile(1 - alpha / 2);
  const zb = normalQuantile(power);
  return Math.max(2, Math.ceil(((za + zb) * sdDiff / delta) ** 2 + (za * za) / 2 - 1e-9));
}

/** One pilot case as the planner reads it (a case's scored passes pooled). */
export interface PilotCase {
  key: string;
  /** Correct passes ÷ scored passes of the case, in [0, 1]; `null` when none was scored. */
  correct: number | null;
  /** The case's joules (mean over its passes), `null` when unknown. */
  joules: number | null;
  /** The case's latency (mean over its passes), ms. */
  latency_ms: number | null;
}

/** One planned difference. */
export interface PowerRow {
  figure: 'accuracy' | 'joules';
  /** The difference to detect: points of accuracy, or percent of the baseline's mean joules per case. */
  difference: number;
  /** Pairs (cases asked of both systems) needed; `null` with `reason` when the pilot cannot say. */
  cases: number | null;
  /** What the planning rested on: ψ for accuracy, σ_d (J) for joules. */
  assumption: string;
  reason: string | null;
}

export interface PowerPlan {
  alpha: number;
  power: number;
  pilot_cases: number;
  /** Whether a candidate pilot was given, so discordance and paired SD were observed, not assumed. */
  paired_pilot: boolean;
  baseline_accuracy: number | null;
  mean_joules_per_case: number | null;
  mean_latency_ms_per_case: number | null;
  rows: PowerRow[];
  /** The most cases any row needs, and that many cases' time and energy at the pilot's rates, per system; `null` when unknown. */
  cases_needed: number | null;
  seconds_per_system: number | null;
  joules_per_system: number | null;
}

/**
 * The cases a paired comparison needs per accuracy (points) and joules (% of mean) difference: ψ and σ_d observed
 * from a candidate pilot, else assumed from independent outcomes (docs/statistics.md).
 */
export function powerPlan(
  baseline: readonly PilotCase[],
  candidate: readonly PilotCase[] | null,
  opts: { accuracyPp: readonly number[]; joulesPct: readonly number[]; alpha?: number; power?: number },
): PowerPlan {
  const alpha = opts.alpha ?? 0.05;
  const power = opts.power ?? 0.8;
  checkAlphaPower(alpha, power);
  const scored = baseline.filter((c) => c.correct !== null);
  const p = scored.length > 0 ? mean(scored.map((c) => c.correct as number)) : null;
  const js = baseline.map((c) => c.joules);
  const jKnown = js.every((j) => j !== null) && js.length >= 2;
  const meanJ = jKnown ? mean(js as number[]) : null;
  const lats = baseline.map((c) => c.latency_ms).filter((l): l is number => l !== null);
  const meanLat = lats.length > 0 ? mean(lats) : null;
  const candBy = candidate ? new Map(candidate.map((c) => [c.key, c])) : null;
  const pairs = candBy ? baseline.flatMap((b) => (candBy.has(b.key) ? [[b, candBy.get(b.key)!] as const] : [])) : [];
  if (candBy && pairs.length === 0) throw new RangeError('powerPlan: the two pilots share no case');

  const rows: PowerRow[] = [];
  for (const d of opts.accuracyPp) {
    const delta = d / 100;
    const row = (cases: number | null, assumption: string, reason: string | null): PowerRow => ({ figure: 'accuracy', difference: d, cases, assumption, reason });
    if (candBy) {
      const both = pairs.filter(([b, c]) => b.correct !== null && c.correct !== null);
      // Per pair, the chance the two disagree when each side's passes are drawn at its own rate.
      const psi = both.length === 0 ? null : mean(both.map(([b, c]) => b.correct! * (1 - c.correct!) + c.correct! * (1 - b.correct!)));
      if (psi === null) rows.push(row(null, '', 'no case scored in both pilots'));
      else if (psi < Math.abs(delta)) rows.push(row(null, `ψ = ${fmt(psi)} (observed)`, `the pilots disagree on ${fmt(psi * 100)} % of cases, fewer than the ${d} points to detect`));
      else rows.push(row(mcnemarSampleSize({ discordance: psi, delta, alpha, power }), `ψ = ${fmt(psi)} (observed)`, null));
    } else if (p === null) rows.push(row(null, '', 'no scored case in the pilot'));
    else {
      const q = p + Math.abs(delta) <= 1 ? p + Math.abs(delta) : p - Math.abs(delta);
      if (q < 0) rows.push(row(null, '', `${d} points is more than any accuracy can move from ${fmt(p * 100)} %`));
      else {
        const psi = p * (1 - q) + q * (1 - p);
        rows.push(row(mcnemarSampleSize({ discordance: psi, delta, alpha, power }), `ψ = ${fmt(psi)} (assumed: independent outcomes at ${fmt(p * 100)} % and ${fmt(q * 100)} %)`, null));
      }
    }
  }
  for (const pct of opts.joulesPct) {
    const row = (cases: number | null, assumption: string, reason: string | null): PowerRow => ({ figure: 'joules', difference: pct, cases, assumption, reason });
    if (meanJ === null) {
      rows.push(row(null, '', 'the pilot has fewer than 2 cases or a case whose energy is unknown'));
      continue;
    }
    let sd: number;
    let assumption: string;
    if (candBy) {
      const diffs = pairs.map(([b, c]) => (b.joules === null || c.joules === null ? null : c.joules - b.joules));
      if (diffs.some((x) => x === null) || diffs.length < 2) {
        rows.push(row(null, '', 'fewer than 2 paired cases with known energy'));
        continue;
      }
      sd = sampleSd(diffs as number[]);
      assumption = `σ_d = ${fmt(sd)} J (observed)`;
    } else {
      sd = sampleSd(js as number[]) * Math.SQRT2;
      assumption = `σ_d = σ·√2 = ${fmt(sd)} J (assumed: uncorrelated systems)`;
    }
    const delta = (pct / 100) * meanJ;
    if (!(sd > 0)) rows.push(row(null, assumption, "the pilot's per-case energy does not vary (a modelled or constant figure): no spread to plan from"));
    else if (!(delta > 0)) rows.push(row(null, assumption, 'the pilot spent no energy: a percentage of it is 0 J'));
    else rows.push(row(pairedMeanSampleSize({ sdDiff: sd, delta, alpha, power }), assumption, null));
  }
  const known = rows.map((r) => r.cases).filter((n): n is number => n !== null);
  const need = known.length > 0 ? Math.max(...known) : null;
  return {
    alpha,
    power,
    pilot_cases: baseline.length,
    paired_pilot: candBy !== null,
    baseline_accuracy: p,
    mean_joules_per_case: meanJ,
    mean_latency_ms_per_case: meanLat,
    rows,
    cases_needed: need,
    seconds_per_system: need === null || meanLat === null ? null : (need * meanLat) / 1000,
    joules_per_system: need === null || meanJ === null ? null : need * meanJ,
  };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function fmt(v: number): string {
  return String(Math.round(v * 1e4) / 1e4);
}

/** The fields of a scored result the planner reads (a results file's case lines). */
export interface PilotResult {
  phase: string;
  index: number;
  passed: boolean | null;
  joules: number | null;
  latency_ms: number;
  error: unknown;
}

/** A pilot run's scored results as one {@link PilotCase} per suite case (its passes pooled), in suite order. */
export function pilotCasesOf(results: readonly PilotResult[]): PilotCase[] {
  const byIndex = new Map<number, PilotResult[]>();
  for (const r of results) {
    if (r.phase !== 'scored') continue;
    const list = byIndex.get(r.index);
    if (list) list.push(r);
    else byIndex.set(r.index, [r]);
  }
  return [...byIndex.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, rs]) => {
      const graded = rs.filter((r) => r.passed !== null);
      const ok = rs.filter((r) => r.error === null || r.error === undefined);
      return {
        key: String(index),
        correct: graded.length === 0 ? null : graded.filter((r) => r.passed).length / graded.length,
        joules: rs.some((r) => r.joules === null) ? null : mean(rs.map((r) => r.joules as number)),
        latency_ms: ok.length === 0 ? null : mean(ok.map((r) => r.latency_ms)),
      };
    });
}
