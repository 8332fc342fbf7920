import { netJoules, type IdleCalibration, type IdleStatus, type SuiteWindow } from './energy.js';
import { STAGE_IDS, type CaseResult, type EnergySource } from './types.js';
import { nearestRank, round, sumNullable } from './stats.js';

/** What a report is about; part of the deterministic report (no timestamps, no host). */
export interface ReportContext {
  suite: { name: string; version: string; digest: string };
  target: string;
  meter: string;
  warmup: number;
  repeats: number;
  /**
   * What the runner measured around the cases: the idle calibration and the whole-suite window
   * (`null` when energy came from the target itself). Absent: no idle window ran.
   */
  energy?: { idle: IdleCalibration; suite: SuiteWindow | null };
}

/** Per-dataset slice of a report (for `--suite all`, one per bundled suite). */
export interface DatasetSummary {
  case_count: number;
  scored_count: number;
  correct_count: number;
  accuracy_pct: number | null;
  total_joules: number | null;
  joules_per_correct: number | null;
}

/**
 * The seed's BenchReport (EOC v0 §6), field names and meanings unchanged, followed by extras.
 * `joules_per_correct` is `null` (JSON has no Infinity) when nothing was correct or energy is unknown.
 * Latency percentiles are nearest-rank over whole milliseconds, truncated like the seed's `u64`
 * (precise values stay in the results JSONL).
 */
export interface BenchReport {
  case_count: number;
  total_joules: number | null;
  joules_per_correct: number | null;
  accuracy_pct: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  latency_p99_ms: number | null;
  stage_distribution: Record<string, number>;
  // ---- extras (DESIGN.md: welcome; the seed fields above stay as they are) ----
  format: 'joulebench-report/1';
  correct_count: number;
  scored_count: number;
  /** Σ weight over correct cases: the denominator of joules_per_correct. */
  weighted_correct: number;
  error_count: number;
  energy_source: EnergySource;
  /** Cases whose energy came from each source. */
  energy_sources: Record<string, number>;
  below_floor_count: number;
  /** Joules spent in each stage (including stages that were tried and passed). */
  stage_joules: Record<string, number | null>;
  total_usd: number | null;
  usd_per_correct: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  retry_count: number;
  retry_overhead_ms: number;
  by_dataset: Record<string, DatasetSummary>;
  suite: ReportContext['suite'];
  target: string;
  meter: string;
  warmup: number;
  repeats: number;
  // ---- energy over the whole suite (issue 3); after the fields above, which keep their order ----
  /** Whole-suite energy: one window around the scored passes, or Σ case energy when the target reported it. */
  gross_joules: number | null;
  gross_source: EnergySource;
  /** gross − idle_watts × suite wall; = gross for marginal sources (model, estimate); null when idle is unknown. */
  net_joules: number | null;
  net_joules_per_correct: number | null;
  idle: IdleStatus;
  idle_watts: number | null;
  /** Wall time of the whole-suite window, ms; null when no window ran (energy from the target). */
  suite_window_ms: number | null;
  suite_below_floor: boolean;
}

/**
 * Rolls the scored results of a run up into a report. Pure: the same results in the same order give
 * the same report. Warmup results are ignored here whatever the caller passes.
 */
export function aggregate(all: readonly CaseResult[], ctx: ReportContext): BenchReport {
  const results = all.filter((r) => r.phase === 'scored');
  const scored = results.filter((r) => r.passed !== null);
  const correct = scored.filter((r) => r.passed === true);
  const weightedCorrect = correct.reduce((s, r) => s + r.weight, 0);

  const totalJoules = sumNullable(results.map((r) => r.joules));
  const latencies = results.filter((r) => r.error === null).map((r) => Math.floor(r.latency_ms));
  const ttfts = results.map((r) => r.ttft_ms).filter((v): v is number => v !== null);

  const stageDistribution: Record<string, number> = Object.fromEntries(STAGE_IDS.map((s) => [s, 0]));
  const stageJoules: Record<string, number | null> = Object.fromEntries(STAGE_IDS.map((s) => [s, null]));
  for (const r of results) {
    if (r.stage !== null) stageDistribution[r.stage] = (stageDistribution[r.stage] ?? 0) + 1;
    if (r.trace) {
      for (const t of r.trace) {
        if (t.energy_uj !== null) stageJoules[t.stage] = (stageJoules[t.stage] ?? 0) + t.energy_uj / 1e6;
      }
    } else if (r.stage !== null && r.joules !== null) {
      stageJoules[r.stage] = (stageJoules[r.stage] ?? 0) + r.joules;
    }
  }

  const sources: Record<string, number> = {};
  for (const r of results) if (r.joules !== null) sources[r.energy_source] = (sources[r.energy_source] ?? 0) + 1;
  const sourceNames = Object.keys(sources);
  const energySource: EnergySource =
    sourceNames.length === 0 ? 'none' : sourceNames.length === 1 ? (sourceNames[0] as EnergySource) : 'mixed';

  const totalUsd = sumNullable(results.map((r) => r.cost_usd));
  const datasets = [...new Set(results.map((r) => r.dataset))].sort();

  return {
    case_count: results.length,
    total_joules: roundOrNull(totalJoules),
    joules_per_correct: perCorrect(totalJoules, weightedCorrect),
    accuracy_pct: pct(correct.length, scored.length),
    latency_p50_ms: nearestRank(latencies, 50),
    latency_p95_ms: nearestRank(latencies, 95),
    latency_p99_ms: nearestRank(latencies, 99),
    stage_distribution: sortedStages(stageDistribution),
    format: 'joulebench-report/1',
    correct_count: correct.length,
    scored_count: scored.length,
    weighted_correct: round(weightedCorrect),
    error_count: results.filter((r) => r.error !== null).length,
    energy_source: energySource,
    energy_sources: sortKeysShallow(sources),
    below_floor_count: results.filter((r) => r.below_floor).length,
    stage_joules: mapValues(sortedStages(stageJoules), roundOrNull),
    total_usd: roundOrNull(totalUsd, 9),
    usd_per_correct: totalUsd === null || weightedCorrect === 0 ? null : round(totalUsd / weightedCorrect, 9),
    prompt_tokens: sumNullable(results.map((r) => r.prompt_tokens)),
    completion_tokens: sumNullable(results.map((r) => r.completion_tokens)),
    ttft_p50_ms: roundOrNull(nearestRank(ttfts, 50), 3),
    ttft_p95_ms: roundOrNull(nearestRank(ttfts, 95), 3),
    retry_count: results.reduce((s, r) => s + Math.max(0, r.attempts - 1), 0),
    retry_overhead_ms: round(results.reduce((s, r) => s + r.retry_overhead_ms, 0), 3),
    by_dataset: Object.fromEntries(datasets.map((d) => [d, summarise(results.filter((r) => r.dataset === d))])),
    suite: ctx.suite,
    target: ctx.target,
    meter: ctx.meter,
    warmup: ctx.warmup,
    repeats: ctx.repeats,
    ...suiteEnergy(totalJoules, energySource, weightedCorrect, ctx.energy),
  };
}

/** The whole-suite figures: the measured window when there is one, else the sum over cases. */
function suiteEnergy(
  casesJoules: number | null,
  casesSource: EnergySource,
  weightedCorrect: number,
  energy: ReportContext['energy'],
): Pick<
  BenchReport,
  'gross_joules' | 'gross_source' | 'net_joules' | 'net_joules_per_correct' | 'idle' | 'idle_watts' | 'suite_window_ms' | 'suite_below_floor'
> {
  const suite = energy?.suite ?? null;
  const marginalSource = casesSource === 'model' || casesSource === 'estimate';
  const idle: Pick<IdleCalibration, 'status' | 'watts'> = energy?.idle ?? { status: marginalSource ? 'marginal' : 'skipped', watts: null };
  const gross = suite ? suite.joules : casesJoules;
  const wall = suite ? suite.window_ms : null;
  const net = netJoules(gross, idle, wall);
  return {
    gross_joules: roundOrNull(gross),
    gross_source: suite ? (suite.joules === null ? 'none' : suite.source) : casesSource,
    net_joules: roundOrNull(net),
    net_joules_per_correct: perCorrect(net, weightedCorrect),
    idle: idle.status,
    idle_watts: roundOrNull(idle.watts),
    suite_window_ms: roundOrNull(wall, 3),
    suite_below_floor: suite?.below_floor ?? false,
  };
}

function summarise(results: readonly CaseResult[]): DatasetSummary {
  const scored = results.filter((r) => r.passed !== null);
  const correct = scored.filter((r) => r.passed === true);
  const total = sumNullable(results.map((r) => r.joules));
  return {
    case_count: results.length,
    scored_count: scored.length,
    correct_count: correct.length,
    accuracy_pct: pct(correct.length, scored.length),
    total_joules: roundOrNull(total),
    joules_per_correct: perCorrect(total, correct.reduce((s, r) => s + r.weight, 0)),
  };
}

function pct(n: number, d: number): number | null {
  return d === 0 ? null : round((n * 100) / d, 4);
}

function perCorrect(joules: number | null, weightedCorrect: number): number | null {
  return joules === null || weightedCorrect === 0 ? null : round(joules / weightedCorrect);
}

function roundOrNull(v: number | null, digits = 6): number | null {
  return v === null ? null : round(v, digits);
}

/** The four cascade stages first in cascade order, then any other stage names sorted. */
function sortedStages<T>(m: Record<string, T>): Record<string, T> {
  const extra = Object.keys(m).filter((k) => !(STAGE_IDS as readonly string[]).includes(k)).sort();
  return Object.fromEntries([...STAGE_IDS, ...extra].map((k) => [k, m[k] as T]));
}

function sortKeysShallow<T>(m: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k] as T]));
}

function mapValues<T, U>(m: Record<string, T>, f: (v: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, f(v)]));
}
