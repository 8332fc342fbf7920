import { energyLayers, netBelowIdle, roundLayers, netJoules, type EnergyLayers, type IdleCalibration, type PowerTraceSummary, type IdleStatus, type SuiteWindow, type WindowValidity } from './energy.js';
import { STAGE_IDS, type CaseResult, type EnergySource, type ResultsHeader } from './types.js';
import { round } from './stats.js';
import { Int8Column, nearestRanks, NumberColumn } from './number-column.js';
import { DEFAULT_RESAMPLES, maxUnitsValue, type BootstrapMaxUnits } from '../stats/bootstrap.js';
import { reportCi, type CaseColumns, type ClusterBy, type ReportCi } from '../stats/report-ci.js';
import { repeatSpread, type RepeatSpread } from '../stats/repeat-spread.js';
import { summarize } from '../stats/serving-summary.js';
import { usdParts, type LocalPrices, type UsdParts } from './usd-parts.js';

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
  energy?: {
    // What the report reads of each (a load run's rebuild has only these, from its `load_energy` line).
    idle: Pick<IdleCalibration, 'status' | 'watts'> & Partial<IdleCalibration>;
    suite: (Pick<SuiteWindow, 'joules' | 'source' | 'window_ms' | 'below_floor' | 'validity'> & Partial<SuiteWindow>) | null;
  };
  /** Cases in flight at once (default 1). Above 1, energy windows overlap: attribution is `shared`. */
  concurrency?: number;
  /**
   * Wall time of the scored passes, ms, for the throughput figures of a closed-loop run (`null` or
   * absent: unknown, e.g. a resumed run or a results file without its `run_measures` line).
   */
  scored_wall_ms?: number | null;
  /**
   * `none`: no per-case windows were opened (an open-loop load run measures the whole run, and its
   * steady state, instead), so the suite window is the only total. Default: cases carry their own.
   */
  per_case_energy?: 'none' | 'target';
  /**
   * Other work shared the hardware (a sweep's `--parallel-arms`): attribution is `shared` as under
   * concurrency, so meter windows are not summed as this run's own.
   */
  shared?: boolean;
  /** Bootstrap resamples for the report's intervals (default 2000; 0: bootstrap off, Wilson still applies). */
  bootstrap?: number;
  /** The most cases the intervals are bootstrapped over (default 20,000; `'inf'`: any number); above it, large-sample intervals. */
  bootstrap_max_units?: BootstrapMaxUnits;
  /** `--cluster`: the intervals resample clusters of cases (the Aggregator must be built with the same). */
  cluster?: ClusterBy;
  /** Electricity and hardware prices: the report then shows its dollars in parts ({@link UsdParts}). */
  prices?: LocalPrices;
  /** `--pue`: the facility's power usage effectiveness, for the modelled `facility` layer. */
  pue?: number;
}

/** Per-dataset slice of a report (for `--suite all`, one per bundled suite). */
export interface DatasetSummary {
  case_count: number;
  scored_count: number;
  correct_count: number;
  accuracy_pct: number | null;
  total_joules: number | null;
  joules_per_correct: number | null;
  energy_unknown_count: number;
}

/**
 * The seed's BenchReport (EOC v0 §6), field names and meanings unchanged, followed by extras.
 * `joules_per_correct` is `null` (JSON has no Infinity) when nothing was correct or energy is unknown.
 * Latency percentiles are nearest-rank over whole milliseconds, truncated like the seed's `u64`
 * (precise values stay in the results JSONL).
 */
export interface BenchReport extends Partial<UsdParts>, Pick<ReportContext, 'suite' | 'target' | 'meter' | 'warmup' | 'repeats'> {
  case_count: number;
  total_joules: number | null;
  joules_per_correct: number | null;
  accuracy_pct: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  latency_p99_ms: number | null;
  stage_distribution: Record<string, number>;
  // ---- extras (DESIGN.md: welcome; the seed fields above stay as they are) ----
  /** `joulebench-report/1.1` since `energy_basis` (docs/integrity.md); readers accept `/1` too. */
  format: typeof REPORT_FORMAT;
  correct_count: number;
  scored_count: number;
  /** Cases no scorer decided (`expected: null`, or a judge that gave no verdict): outside `accuracy_pct`. */
  unscored_count: number;
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
  // suite, target, meter, warmup, repeats: from the context (Pick above), here in key order.
  // ---- energy over the whole suite; after the fields above, which keep their order ----
  /** Whole-suite energy: one window around the scored passes, or Σ case energy when the target reported it. */
  gross_joules: number | null;
  gross_source: EnergySource;
  /** gross − idle_watts × suite wall; = gross for marginal sources (model, estimate); null when idle is unknown. */
  net_joules: number | null;
  net_joules_per_correct: number | null;
  idle: IdleStatus;
  idle_watts: number | null;
  /**
   * Wall time of the scored passes, ms: the whole-suite meter window's, or without one (energy from the
   * target) the wall clock's (the throughput's); null when neither is known (a resumed run, a results
   * file without its `run_measures` line).
   */
  suite_window_ms: number | null;
  suite_below_floor: boolean;
  /** Gross was below idle × wall (the signal is under the idle noise): net is null, not negative. */
  net_below_idle: boolean;
  concurrency: number;
  /** `exclusive`: one case at a time, so a case's energy is its own; `shared`: cases overlapped (concurrency > 1). */
  energy_attribution: 'exclusive' | 'shared';
  /** Scored cases with no energy figure. While any exists, `total_joules` and `joules_per_correct` are null. */
  energy_unknown_count: number;
  /**
   * Source of `stage_joules`. A cascade's per-stage split comes from its stage cost model (`model`)
   * even when a hardware meter measured the totals: a meter sees the whole case, not its stages.
   */
  stage_joules_source: EnergySource;
  /** Dollars the warmup passes billed (never part of `total_usd`, which covers scored cases); null when none reported a cost. */
  warmup_usd: number | null;
  /**
   * Cases with no cost while others have one, or (format 1.1) that reported token usage with no price
   * to bill it: `total_usd` and `usd_per_correct` are null while this is above 0.
   */
  cost_unknown_count: number;
  /** Cases with no token usage while others have it: the token totals are null while this is above 0. */
  usage_unknown_count: number;
  /**
   * Where `total_joules` and `joules_per_correct` come from (report format 1.1): `per_case`, the sum of
   * each case's own reading; `suite_window`, the one window around the scored passes, used when the
   * per-case readings cannot be summed (below the meter's floor, or overlapping under concurrency).
   */
  energy_basis: EnergyBasis;
  /** Why the basis is what it is, when that is not the plain per-case sum; `null` otherwise. */
  energy_basis_reason: string | null;
  /**
   * Present only when energy is modelled with an uncertainty range (`model:api`): the low–high range of
   * `total_joules` and `joules_per_correct` (Σ of each case's low and high ends), J. The point figures
   * above are the midpoints.
   */
  energy_model_range?: { method: 'min-max'; total_joules: { low: number; high: number }; joules_per_correct: { low: number; high: number } | null };
  /**
   * Throughput over the scored passes' wall time. `null` when that is unknown (a resumed run) and for
   * the reference cascade's byte-identical sequential run (docs/determinism.md).
   */
  throughput: Throughput | null;
  /**
   * vLLM `bench serve`'s TPOT over the cases whose reply streamed more than one output token:
   * (e2e − TTFT) ÷ (output tokens − 1) a case, then mean, median, population std and p99 (numpy's
   * linear percentile). `null` when no case streamed (a plain reply has no TTFT), never 0.
   */
  mean_tpot_ms: number | null;
  median_tpot_ms: number | null;
  std_tpot_ms: number | null;
  p99_tpot_ms: number | null;
  /**
   * vLLM's ITL: every gap between successive token-bearing chunks of every streamed case (the case
   * lines' `itl_ms`), pooled, then mean, median, std and p99 as TPOT. `null` when no case kept its gaps.
   */
  mean_itl_ms: number | null;
  median_itl_ms: number | null;
  std_itl_ms: number | null;
  p99_itl_ms: number | null;
  /** Of `prompt_tokens`, those served from the provider's cache; present when a case reported it, null while some did not. */
  cached_prompt_tokens?: number | null;
  /** Of `completion_tokens`, the reasoning tokens; present when a case reported it, null while some did not. */
  reasoning_tokens?: number | null;
  /** Confidence intervals: Wilson for accuracy, a percentile bootstrap over cases for the rest. */
  ci: ReportCi;
  /** `--repeat N` (N ≥ 2): how energy and latency varied between passes (the environment); null for one pass. */
  repeat_spread: RepeatSpread | null;
  /**
   * Present only when a stage's figure in `stage_joules` is measured: per stage, `measured` (the meter's
   * readings of the cases it resolved, every one at or above the floor, earlier stages they passed
   * included) or `model` (the stage cost model, over the cases a `model` stage resolved).
   */
  stage_joules_basis?: Record<string, 'measured' | 'model'>;
  /**
   * Present only when some case billed dollars: per resolving stage, the token dollars of the cases it
   * resolved (only a resolving stage calls a model); null when any of them has no cost.
   */
  stage_usd_tokens?: Record<string, number | null>;
  /**
   * Present when the suite window's meter kept its samples: whether they can be trusted. An invalid window
   * gives no J/correct (`net_joules_per_correct`, and `joules_per_correct` when it is the basis) — null, with the reason.
   */
  suite_window_validity?: WindowValidity;
  /** Scored cases whose own window failed its validity checks (never summed); present when above 0. */
  energy_invalid_count?: number;
  /** The boundary layers the suite window's energy covers, each measured or modelled; present when a window has domains. */
  energy_layers?: EnergyLayers;
  /** `--power-trace`: watts per domain over time with the run's phases, downsampled (the CSV has every row). */
  power_trace?: PowerTraceSummary;
}

/** Per resolving stage of a cascade: the modelled µJ of every stage its cases tried, and their meter readings. */
interface ResolverTally {
  model_uj: Record<string, number>;
  measured_j: number;
  /** Every case has a hardware reading at or above the meter's floor. */
  measured_ok: boolean;
  sources: Set<EnergySource>;
}

/** Sources that are a meter's reading of hardware, not a coefficient or a cost model. */
const MODELLED: ReadonlySet<EnergySource> = new Set(['model', 'model:api', 'estimate', 'none']);

/** Cases and output tokens per second over the wall time of the scored passes. */
export interface Throughput {
  wall_ms: number;
  cases_per_s: number;
  /** `null` when any case's output tokens are unknown. */
  output_tokens_per_s: number | null;
}

/** The report format; the minor version moves when a field's meaning changes (docs/integrity.md). */
export const REPORT_FORMAT = 'joulebench-report/1.1';

/** See {@link BenchReport.energy_basis}. */
export type EnergyBasis = 'per_case' | 'suite_window';

/** Running totals over one slice of results (the whole run, or one dataset). */
class Tally {
  case_count = 0;
  scored = 0;
  correct = 0;
  weightedCorrect = 0;
  joules = 0;
  /** Cases with no energy figure: while any exists, the total is unknown rather than a partial sum. */
  joulesUnknown = 0;
  /** Cases whose energy came from a meter window (not the target's own model): they overlap when cases run concurrently. */
  windowed = 0;
  /** Meter-window readings shorter than the meter's floor: noise, never summed as precise figures. */
  belowFloor = 0;
  /** Meter-window readings whose samples failed the validity checks: never summed. */
  invalid = 0;
  /** Cases with modelled remote-API energy (`model:api`), and Σ of their low and high ends. */
  apiModelled = 0;
  rangeLow = 0;
  rangeHigh = 0;
  /** Cases with a `model:api` figure but no range (then no range is reported). */
  rangeMissing = 0;
  /** Cases with energy from any other source: never summed with `model:api`. */
  otherSourced = 0;
  constructor(private readonly shared: boolean) {}
  add(r: CaseResult): void {
    this.case_count++;
    if (r.passed !== null) this.scored++;
    if (r.passed === true) {
      this.correct++;
      this.weightedCorrect += r.weight;
    }
    if (r.joules !== null) {
      this.joules += r.joules;
      if (r.energy_source !== 'model' && r.energy_source !== 'model:api') this.windowed++;
      if (r.energy_source === 'model:api') {
        this.apiModelled++;
        if (r.joules_range) {
          this.rangeLow += r.joules_range.low;
          this.rangeHigh += r.joules_range.high;
        } else this.rangeMissing++;
      } else this.otherSourced++;
      if (r.below_floor) this.belowFloor++;
      if (r.energy_invalid !== undefined) this.invalid++;
    } else {
      this.joulesUnknown++;
    }
  }
  /**
   * Σ case joules; `null` when any case's energy is unknown (a partial sum would understate the cost),
   * and when cases ran concurrently under a meter: overlapping windows each saw the others' work, so
   * their sum overstates the energy about `concurrency` times (the suite window is the total then).
   */
  get totalJoules(): number | null {
    if (this.shared && this.windowed > 0) return null;
    // A modelled remote-API figure is never added to a measured (or any other) one.
    if (this.apiModelled > 0 && this.otherSourced > 0) return null;
    // A below-floor reading is noise (often exactly 0 J): summing it would pass it off as measured.
    if (this.belowFloor > 0 || this.invalid > 0) return null;
    return this.case_count > 0 && this.joulesUnknown === 0 ? this.joules : null;
  }
  /** The range of the total when every figure is `model:api` with a range; else null. */
  get totalRange(): { low: number; high: number } | null {
    if (this.apiModelled === 0 || this.rangeMissing > 0 || this.totalJoules === null) return null;
    return { low: this.rangeLow, high: this.rangeHigh };
  }
  summary(): DatasetSummary {
    return {
      case_count: this.case_count,
      scored_count: this.scored,
      correct_count: this.correct,
      accuracy_pct: pct(this.correct, this.scored),
      total_joules: roundOrNull(this.totalJoules),
      joules_per_correct: perCorrect(this.totalJoules, this.weightedCorrect),
      energy_unknown_count: this.joulesUnknown,
    };
  }
}

/**
 * Rolls results up into a report as they arrive, so a long run need not keep every result in
 * memory. Pure: the same results in the same order give the same report. Warmup results are ignored.
 */
export class Aggregator {
  private readonly total: Tally;
  private readonly byDataset = new Map<string, Tally>();
  /** TTFTs of the cases that reported one (no storage until one does): exact percentiles. */
  private readonly ttfts: NumberColumn;
  /** Scored cases without an error whose latency is NaN, and NaN TTFTs (none from a clock or a JSON file): sorted last. */
  private nanLatencies = 0;
  private nanTtfts = 0;
  /**
   * TPOTs of the answered cases that have one, and every ITL gap of every answered case, in whole
   * microseconds (a case line keeps three decimals of a millisecond): 4 bytes a value below 16.7 s.
   */
  private readonly tpots_us: NumberColumn;
  private readonly itls_us: NumberColumn;
  // The four cascade stages in slots (STAGE_IDS order); any other stage name in the records below.
  // Sums start at 0 with a separate "known" flag rather than at null: a field that held null stores
  // each new double as a fresh heap number, one allocation per stage per case.
  private readonly slotCount = [0, 0, 0, 0];
  private readonly slotJoules = new Float64Array(4);
  private readonly slotJoulesKnown = [false, false, false, false];
  private readonly stageDistribution: Record<string, number> = {};
  private readonly stageJoules: Record<string, number> = {};
  private readonly stageJoulesKnown: Record<string, boolean> = {};
  /** Where the per-stage figures came from: a cascade's trace is its cost model, whatever meter ran. */
  private readonly stageSources = new Set<EnergySource>();
  private lastStageSource: EnergySource | null = null;
  private readonly byResolver = new Map<string, ResolverTally>();
  private readonly stageUsd: Record<string, { usd: number; known: boolean }> = {};
  private usdBilled = false;
  /** The dataset of the latest case and its tally (cases of one dataset usually come in a row). */
  private lastDataset: string | null = null;
  private lastTally: Tally | null = null;
  private readonly sources: Record<string, number> = {};
  private usd = 0;
  private usdKnown = false;
  private usdUnknown = 0;
  private usdUnknownWithUsage = 0;
  private promptTokens: number | null = null;
  private completionTokens: number | null = null;
  private usageUnknown = 0;
  /** Σ and count of the cases that reported cached prompt and reasoning tokens. */
  private readonly detail = { cached: 0, cachedCases: 0, reasoning: 0, reasoningCases: 0 };
  private warmupUsd: number | null = null;
  private readonly shared: boolean;
  /**
   * Per-case figures for the intervals (see {@link CaseColumns}), each stored as narrowly as its values
   * allow (`NumberColumn`): nothing a case for a column whose values are all alike (the unit while it is
   * the case index, a single pass, all weights 1, energy or cost unknown throughout), 4 bytes for whole
   * milliseconds. `latency_ms` (NaN for a case that failed) is also the column the report's latency
   * percentiles are taken from.
   */
  private readonly cols: { unit: NumberColumn; pass: NumberColumn; passed: Int8Column; weight: NumberColumn; joules: NumberColumn; usd: NumberColumn; latency_ms: NumberColumn };

  /** Scored results added so far. */
  get scoredCount(): number {
    return this.total.case_count;
  }

  /**
   * `concurrency` > 1 marks energy attribution shared (see `Tally.totalJoules`). `columns: 'reference'`
   * stores every per-case column as a `Float64Array` (as before the compact storage; for the tests that
   * check the two give the same report).
   */
  constructor(opts: { concurrency?: number; shared?: boolean; columns?: 'compact' | 'reference'; cluster?: ClusterBy } = {}) {
    this.shared = (opts.concurrency ?? 1) > 1 || opts.shared === true;
    this.cluster = opts.cluster ?? null;
    this.total = new Tally(this.shared);
    const wide = opts.columns === 'reference';
    const col = (o: { index?: boolean } = {}) => new NumberColumn({ ...o, wide });
    this.cols = { unit: col({ index: true }), pass: col(), passed: new Int8Column(), weight: col(), joules: col(), usd: col(), latency_ms: col() };
    this.ttfts = col();
    this.tpots_us = col();
    this.itls_us = col();
  }
  /** `subject`: the unit column carries each case's dataset (subject) number, so the intervals resample subjects. */
  private readonly cluster: ClusterBy | null;
  private readonly subjectIds = new Map<string, number>();
  private errors = 0;
  private belowFloor = 0;
  private retries = 0;
  private retryOverhead = 0;

  add(r: CaseResult): void {
    if (r.phase !== 'scored') {
      // Warmup is never scored, but what it billed is spent all the same: reported apart.
      if (r.cost_usd !== null) this.warmupUsd = (this.warmupUsd ?? 0) + r.cost_usd;
      return;
    }
    this.total.add(r);
    let ds = r.dataset === this.lastDataset ? this.lastTally : this.byDataset.get(r.dataset);
    if (!ds) this.byDataset.set(r.dataset, (ds = new Tally(this.shared)));
    this.lastDataset = r.dataset;
    this.lastTally = ds;
    ds.add(r);
    const latency = r.error === null ? Math.floor(r.latency_ms) : NaN;
    if (r.error !== null) this.errors++;
    else if (latency !== latency) this.nanLatencies++;
    const cols = this.cols;
    if (this.cluster === 'subject') {
      let id = this.subjectIds.get(r.dataset);
      if (id === undefined) this.subjectIds.set(r.dataset, (id = this.subjectIds.size));
      cols.unit.push(id);
    } else cols.unit.push(r.index);
    cols.pass.push(r.pass);
    cols.passed.push(r.passed === true ? 1 : r.passed === false ? 0 : -1);
    cols.weight.push(r.weight);
    cols.joules.push(r.joules ?? NaN);
    cols.usd.push(r.cost_usd ?? NaN);
    cols.latency_ms.push(latency);
    if (r.ttft_ms !== null) {
      this.ttfts.push(r.ttft_ms);
      if (r.ttft_ms !== r.ttft_ms) this.nanTtfts++;
    }
    if (r.error === null) {
      if (r.tpot_ms !== null) this.tpots_us.push(Math.round(r.tpot_ms * 1000));
      const itl = r.itl_ms;
      if (itl !== undefined) for (let i = 0; i < itl.length; i++) this.itls_us.push(Math.round(itl[i]! * 1000));
    }
    if (r.stage !== null) {
      const slot = stageSlot(r.stage);
      if (slot >= 0) this.slotCount[slot]!++;
      else this.stageDistribution[r.stage] = (this.stageDistribution[r.stage] ?? 0) + 1;
    }
    if (r.trace) {
      for (let i = 0; i < r.trace.length; i++) {
        const t = r.trace[i]!;
        if (t.energy_uj !== null) this.addStageJoules(t.stage, t.energy_uj / 1e6);
      }
      if (r.trace.length > 0) this.addStageSource('model');
      if (r.stage !== null) this.addResolver(r, r.stage, r.trace);
    } else if (r.stage !== null && r.joules !== null) {
      this.addStageJoules(r.stage, r.joules);
      this.addStageSource(r.energy_source);
    }
    if (r.joules !== null) this.sources[r.energy_source] = (this.sources[r.energy_source] ?? 0) + 1;
    if (r.stage !== null) {
      const s = (this.stageUsd[r.stage] ??= { usd: 0, known: true });
      if (r.cost_usd === null) s.known = false;
      else s.usd += r.cost_usd;
    }
    if (r.cost_usd !== null) {
      if (r.cost_usd > 0) this.usdBilled = true;
      this.usd += r.cost_usd;
      this.usdKnown = true;
    } else {
      this.usdUnknown++;
      // Tokens were used but nothing priced them (no price for the model): unknown, not free.
      if (r.prompt_tokens !== null || r.completion_tokens !== null) this.usdUnknownWithUsage++;
    }
    if (r.prompt_tokens !== null) this.promptTokens = (this.promptTokens ?? 0) + r.prompt_tokens;
    if (r.completion_tokens !== null) this.completionTokens = (this.completionTokens ?? 0) + r.completion_tokens;
    if (r.prompt_tokens === null || r.completion_tokens === null) this.usageUnknown++;
    if (r.cached_prompt_tokens !== undefined) (this.detail.cached += r.cached_prompt_tokens), this.detail.cachedCases++;
    if (r.reasoning_tokens !== undefined) (this.detail.reasoning += r.reasoning_tokens), this.detail.reasoningCases++;
    if (r.below_floor) this.belowFloor++;
    this.retries += Math.max(0, r.attempts - 1);
    this.retryOverhead += r.retry_overhead_ms;
  }

  private addStageJoules(stage: string, joules: number): void {
    const slot = stageSlot(stage);
    if (slot >= 0) {
      this.slotJoules[slot]! += joules;
      this.slotJoulesKnown[slot] = true;
      return;
    }
    this.stageJoules[stage] = (this.stageJoules[stage] ?? 0) + joules;
    this.stageJoulesKnown[stage] = true;
  }

  private addResolver(r: CaseResult, stage: string, trace: NonNullable<CaseResult['trace']>): void {
    let t = this.byResolver.get(stage);
    if (!t) this.byResolver.set(stage, (t = { model_uj: {}, measured_j: 0, measured_ok: true, sources: new Set() }));
    for (const e of trace) if (e.energy_uj !== null) t.model_uj[e.stage] = (t.model_uj[e.stage] ?? 0) + e.energy_uj;
    if (r.joules === null || r.below_floor || MODELLED.has(r.energy_source)) t.measured_ok = false;
    else {
      t.measured_j += r.joules;
      t.sources.add(r.energy_source);
    }
  }

  /**
   * Per-stage energy where a stage's own cases were all measured above the floor: that stage's figure is
   * the meter's; every other stage keeps the cost model over the cases those stages resolved (a measured
   * case's modelled lookups are inside its reading, never counted twice). `null` when nothing was measured.
   */
  private measuredStages(stageJoules: Record<string, number | null>): { joules: Record<string, number | null>; basis: Record<string, 'measured' | 'model'>; source: EnergySource } | null {
    const measured = [...this.byResolver].filter(([, t]) => t.measured_ok && t.sources.size > 0);
    if (measured.length === 0 || this.shared) return null;
    const isMeasured = new Set(measured.map(([s]) => s));
    const sources = new Set<EnergySource>();
    const basis: Record<string, 'measured' | 'model'> = {};
    const joules = mapValues(stageJoules, (_v, stage) => {
      if (isMeasured.has(stage)) {
        const t = this.byResolver.get(stage)!;
        t.sources.forEach((s) => sources.add(s));
        basis[stage] = 'measured';
        return round(t.measured_j);
      }
      let uj: number | null = null;
      for (const [resolver, t] of this.byResolver) if (!isMeasured.has(resolver) && t.model_uj[stage] !== undefined) uj = (uj ?? 0) + t.model_uj[stage]!;
      if (uj !== null) {
        basis[stage] = 'model';
        sources.add('model');
      }
      return uj === null ? null : round(uj / 1e6);
    });
    return { joules, basis, source: sources.size === 1 ? [...sources][0]! : 'mixed' };
  }

  private addStageSource(source: EnergySource): void {
    if (source === this.lastStageSource) return;
    this.stageSources.add(source);
    this.lastStageSource = source;
  }

  /** A per-stage record: the four cascade stages (from their slots), then any other names. */
  private stageRecord<T>(slots: ArrayLike<T>, rest: Record<string, T>): Record<string, T> {
    const out: Record<string, T> = {};
    STAGE_IDS.forEach((id, i) => (out[id] = slots[i]!));
    return Object.assign(out, rest);
  }

  /**
   * The columns, each cut to the cases added. A column that stores nothing a case is materialised (in
   * the narrowest array that holds its value) only when read: with the bootstrap off the intervals
   * read `passed` and `latency_ms` alone.
   */
  private get columns(): CaseColumns {
    const c = this.cols;
    const lazily = ['unit', 'pass', 'weight', 'joules', 'usd', 'latency_ms'] as const;
    const getters = Object.fromEntries(lazily.map((k) => [k, { enumerable: true, get: () => c[k].view() }]));
    return Object.defineProperties({ passed: c.passed.view() } as unknown as CaseColumns, getters);
  }

  /** Bytes the per-case columns hold now (their typed arrays' capacity), for tests and the benches. */
  get columnBytes(): number {
    const c = this.cols;
    return c.unit.byteLength + c.pass.byteLength + c.passed.byteLength + c.weight.byteLength + c.joules.byteLength + c.usd.byteLength + c.latency_ms.byteLength + this.ttfts.byteLength + this.tpots_us.byteLength + this.itls_us.byteLength;
  }

  report(ctx: ReportContext): BenchReport {
    const { total } = this;
    const sourceNames = Object.keys(this.sources);
    const basis = energyBasis(total, ctx);
    // No case has a reading but the headline is the suite window's (a load run): the source is the window's.
    const windowSource = basis.basis === 'suite_window' ? (ctx.energy?.suite?.source ?? 'none') : 'none';
    const energySource: EnergySource =
      sourceNames.length === 0 ? windowSource : sourceNames.length === 1 ? (sourceNames[0] as EnergySource) : 'mixed';
    // Like energy: no total while any case's cost (or usage) is unknown, rather than a partial sum.
    const tokensUsd = this.usdKnown && this.usdUnknown === 0 ? this.usd : null;
    const usageKnown = this.usageUnknown === 0;
    // Nearest-rank over the timed cases (a failed case's NaN left out; any other NaN sorts last).
    const [p50, p95, p99] = nearestRanks(this.cols.latency_ms, [50, 95, 99], this.nanLatencies);
    const headlineJoules = basis.joules;
    const [ttft50, ttft95] = nearestRanks(this.ttfts, [50, 95], this.nanTtfts);
    const known = this.stageRecord(this.slotJoulesKnown, this.stageJoulesKnown);
    const columns = this.columns;
    const throughput = throughputOf(ctx, total.case_count, usageKnown ? this.completionTokens : null);
    const modelStageJoules = mapValues(sortedStages(this.stageRecord(this.slotJoules, this.stageJoules)), (v, k) => (known[k] ? roundOrNull(v) : null));
    const stagesMeasured = this.measuredStages(modelStageJoules);
    const energy = suiteEnergy(total.totalJoules, energySource, total.weightedCorrect, ctx.energy, throughput?.wall_ms ?? null);
    const priced = ctx.prices
      ? usdParts({ tokens_usd: tokensUsd, tokens_billed: this.usdKnown, joules: basis.joules, energy_source: energySource, wall_ms: energy.suite_window_ms }, ctx.prices)
      : null;
    const totalUsd = priced ? priced.total_usd : tokensUsd;
    // Energy and hardware dollars are run-level figures: the per-case `cost_usd` column has tokens only.
    const runLevelUsd = priced !== null && (priced.parts.electricity_usd_per_kwh !== null || priced.parts.hardware_usd_per_hour !== null);
    return {
      case_count: total.case_count,
      total_joules: roundOrNull(headlineJoules),
      joules_per_correct: perCorrect(headlineJoules, total.weightedCorrect),
      accuracy_pct: pct(total.correct, total.scored),
      latency_p50_ms: p50 ?? null,
      latency_p95_ms: p95 ?? null,
      latency_p99_ms: p99 ?? null,
      stage_distribution: sortedStages(this.stageRecord(this.slotCount, this.stageDistribution)),
      format: REPORT_FORMAT,
      correct_count: total.correct,
      scored_count: total.scored,
      unscored_count: total.case_count - total.scored,
      weighted_correct: round(total.weightedCorrect),
      error_count: this.errors,
      energy_source: energySource,
      energy_sources: Object.fromEntries(Object.keys(this.sources).sort().map((k) => [k, this.sources[k]!])),
      below_floor_count: this.belowFloor,
      stage_joules: stagesMeasured?.joules ?? modelStageJoules,
      total_usd: roundOrNull(totalUsd, 9),
      usd_per_correct: totalUsd === null || total.weightedCorrect === 0 ? null : round(totalUsd / total.weightedCorrect, 9),
      prompt_tokens: usageKnown ? this.promptTokens : null,
      completion_tokens: usageKnown ? this.completionTokens : null,
      ttft_p50_ms: roundOrNull(ttft50 ?? null, 3),
      ttft_p95_ms: roundOrNull(ttft95 ?? null, 3),
      retry_count: this.retries,
      retry_overhead_ms: round(this.retryOverhead, 3),
      by_dataset: Object.fromEntries([...this.byDataset.keys()].sort().map((d) => [d, this.byDataset.get(d)!.summary()])),
      suite: ctx.suite,
      target: ctx.target,
      meter: ctx.meter,
      warmup: ctx.warmup,
      repeats: ctx.repeats,
      ...energy,
      concurrency: ctx.concurrency ?? 1,
      energy_attribution: (ctx.concurrency ?? 1) > 1 || ctx.shared === true ? 'shared' : 'exclusive',
      energy_unknown_count: total.joulesUnknown,
      // Since format 1.1 also the cases that used tokens nobody priced, even when no case had a cost.
      cost_unknown_count: this.usdKnown ? this.usdUnknown : this.usdUnknownWithUsage,
      usage_unknown_count: this.promptTokens !== null || this.completionTokens !== null ? this.usageUnknown : 0,
      warmup_usd: roundOrNull(this.warmupUsd, 9),
      stage_joules_source: stagesMeasured ? stagesMeasured.source : this.stageSources.size === 0 ? 'none' : this.stageSources.size === 1 ? [...this.stageSources][0]! : 'mixed',
      energy_basis: basis.basis,
      energy_basis_reason: basis.reason,
      ...modelRange(total.totalRange, total.weightedCorrect),
      ...(priced ? priced.parts : {}),
      ...tokenDetail('cached_prompt_tokens', this.detail.cached, this.detail.cachedCases, total.case_count),
      ...tokenDetail('reasoning_tokens', this.detail.reasoning, this.detail.reasoningCases, total.case_count),
      throughput,
      ...streamLatency('tpot', this.tpots_us),
      ...streamLatency('itl', this.itls_us),
      ci: reportCi(columns, {
        seed: ctx.suite.digest,
        resamples: ctx.bootstrap ?? DEFAULT_RESAMPLES,
        maxUnits: maxUnitsValue(ctx.bootstrap_max_units),
        cluster: ctx.cluster,
        // Only a per-case sum has per-case variation to resample; a suite-window total is one reading.
        joulesUnknown: basis.basis === 'per_case' && headlineJoules !== null ? null : (basis.reason ?? this.joulesUnknownReason()),
        usdUnknown: runLevelUsd
          ? 'the dollars include run-level energy or hardware parts: no per-case dollars to resample'
          : totalUsd !== null ? null : this.usdKnown ? `cost unknown for ${this.usdUnknown} cases` : 'no case reported a cost',
      }),
      repeat_spread: repeatSpread(columns, {
        no_pass_energy: this.shared
          ? 'energy attribution shared: no per-pass joules'
          : basis.basis !== 'per_case'
            ? `no per-pass joules: the energy total is one suite-window reading (${basis.reason ?? 'energy_basis suite_window'})`
            : null,
      }),
      ...(stagesMeasured ? { stage_joules_basis: stagesMeasured.basis } : {}),
      // Token dollars per resolving stage; energy dollars per stage would be stage_joules × the $/kWh price.
      ...(this.usdBilled ? { stage_usd_tokens: mapValues(sortedStages(this.stageUsd), (s) => (s === undefined ? null : s.known ? round(s.usd, 9) : null)) } : {}),
      ...(ctx.energy?.suite?.validity ? { suite_window_validity: ctx.energy.suite.validity } : {}),
      ...(total.invalid > 0 ? { energy_invalid_count: total.invalid } : {}),
      ...layersOf(ctx, total.weightedCorrect),
    };
  }

  /** Why the energy total is null, for the intervals' reasons. */
  private joulesUnknownReason(): string {
    if (this.total.joulesUnknown > 0) return `energy unknown for ${this.total.joulesUnknown} cases`;
    if (this.shared) return 'energy attribution shared (cases overlapped): no per-case joules to resample';
    return 'no case has an energy figure';
  }
}

/** A token-detail total, only when some case reported it (other reports keep their bytes); null while some case did not. */
function tokenDetail<K extends 'cached_prompt_tokens' | 'reasoning_tokens'>(key: K, sum: number, cases: number, all: number): Partial<Record<K, number | null>> {
  return cases === 0 ? {} : ({ [key]: cases === all ? sum : null } as Record<K, number | null>);
}

/** The `energy_layers` block, when the suite window has domains to put in layers (or a PUE was given). */
function layersOf(ctx: ReportContext, weightedCorrect: number): Pick<BenchReport, 'energy_layers'> {
  const suite = ctx.energy?.suite;
  if (!suite || (!suite.by_domain && ctx.pue === undefined)) return {};
  const layers = energyLayers({ ...suite, by_domain: suite.by_domain ?? {} }, ctx.energy!.idle, weightedCorrect, ctx.pue ?? null);
  return { energy_layers: roundLayers(layers, (v) => round(v)) };
}

/** The `energy_model_range` block, only when there is a range to report (older reports keep their bytes). */
function modelRange(range: { low: number; high: number } | null, weightedCorrect: number): Pick<BenchReport, 'energy_model_range'> {
  if (range === null) return {};
  return {
    energy_model_range: {
      method: 'min-max',
      total_joules: { low: round(range.low), high: round(range.high) },
      joules_per_correct: weightedCorrect === 0 ? null : { low: round(range.low / weightedCorrect), high: round(range.high / weightedCorrect) },
    },
  };
}

/**
 * The headline energy: the sum of per-case readings when they can be summed, else the suite window
 * (580 of 600 cases below RAPL's floor, 588 reading exactly 0 J, summed to 7.02 mJ while
 * the suite window measured 11.3 mJ). Without a usable window the headline is `null`, never the sum.
 */
function energyBasis(total: Tally, ctx: ReportContext): { basis: EnergyBasis; joules: number | null; reason: string | null } {
  const perCase = total.totalJoules;
  const why: string[] = [];
  if (total.belowFloor > 0) {
    why.push(`${total.belowFloor} of ${total.case_count} case reading(s) below the ${ctx.meter} meter's floor (noise, not summed)`);
  }
  if ((ctx.concurrency ?? 1) > 1 && total.windowed > 0) why.push(`${ctx.concurrency} cases in flight: per-case windows overlap`);
  if (ctx.shared === true && total.windowed > 0) why.push('other arms ran on the hardware at the same time (--parallel-arms): windows include their work');
  if (ctx.per_case_energy === 'none') why.push('load run: no per-request windows (they would overlap)');
  if (total.invalid > 0) why.push(`${total.invalid} case window(s) failed the validity checks (not summed)`);
  if (why.length === 0) return { basis: 'per_case', joules: perCase, reason: null };
  const suite = ctx.energy?.suite ?? null;
  const invalid = suite?.validity?.valid === false;
  if (suite && suite.joules !== null && !suite.below_floor && !invalid) {
    return { basis: 'suite_window', joules: suite.joules, reason: `${why.join('; ')}: the suite window is the total` };
  }
  const missing = !suite
    ? 'no suite window covers every case (e.g. a resumed run)'
    : suite.joules === null
      ? 'the suite window read nothing'
      : invalid
        ? `the suite window is not valid (${suite.validity!.reasons.join('; ')})`
        : 'the suite window is below the floor too';
  return { basis: 'per_case', joules: null, reason: `${why.join('; ')}, and ${missing}: total unknown` };
}

/** The whole-suite figures: the measured window when there is one, else the sum over cases. */
function suiteEnergy(
  casesJoules: number | null,
  casesSource: EnergySource,
  weightedCorrect: number,
  energy: ReportContext['energy'],
  /** The scored passes' wall clock when the report carries it anyway (its throughput), ms. */
  scoredWall_ms: number | null,
): Pick<
  BenchReport,
  'gross_joules' | 'gross_source' | 'net_joules' | 'net_joules_per_correct' | 'idle' | 'idle_watts' | 'suite_window_ms' | 'suite_below_floor' | 'net_below_idle'
> {
  const suite = energy?.suite ?? null;
  const marginalSource = casesSource === 'model' || casesSource === 'model:api' || casesSource === 'estimate';
  const idle: Pick<IdleCalibration, 'status' | 'watts'> = energy?.idle ?? { status: marginalSource ? 'marginal' : 'skipped', watts: null };
  const gross = suite ? suite.joules : casesJoules;
  const wall = suite ? suite.window_ms : null;
  const net = netJoules(gross, idle, wall);
  return {
    gross_joules: roundOrNull(gross),
    gross_source: suite ? (suite.joules === null ? 'none' : suite.source) : casesSource,
    net_joules: roundOrNull(net),
    // J/correct only from a valid window.
    net_joules_per_correct: suite?.validity?.valid === false ? null : perCorrect(net, weightedCorrect),
    idle: idle.status,
    idle_watts: roundOrNull(idle.watts),
    // Without a meter window (energy from the target), the same span by the wall clock: never used for net.
    suite_window_ms: roundOrNull(wall ?? scoredWall_ms, 3),
    suite_below_floor: suite?.below_floor ?? false,
    net_below_idle: netBelowIdle(gross, idle, wall),
  };
}

/** `mean_<family>_ms`, `median_…`, `std_…`, `p99_…` as vLLM `bench serve` computes them (src/stats/serving-summary.ts), from microseconds. */
function streamLatency<F extends 'tpot' | 'itl'>(family: F, us: NumberColumn): Record<`${'mean' | 'median' | 'std' | 'p99'}_${F}_ms`, number | null> {
  const s = summarize(Float64Array.from(us.view(), (v) => v / 1000), [99]);
  return {
    [`mean_${family}_ms`]: s.mean,
    [`median_${family}_ms`]: s.median,
    [`std_${family}_ms`]: s.std,
    [`p99_${family}_ms`]: s.percentiles['99'] ?? null,
  } as Record<`${'mean' | 'median' | 'std' | 'p99'}_${F}_ms`, number | null>;
}

function throughputOf(ctx: ReportContext, cases: number, outputTokens: number | null): Throughput | null {
  const wall = ctx.scored_wall_ms ?? null;
  if (wall === null || !(wall > 0)) return null;
  return {
    wall_ms: round(wall, 3),
    cases_per_s: round((cases * 1000) / wall, 4),
    output_tokens_per_s: outputTokens === null ? null : round((outputTokens * 1000) / wall, 4),
  };
}

/** The slot of a cascade stage (STAGE_IDS order), -1 for any other stage name. */
function stageSlot(stage: string): number {
  return (STAGE_IDS as readonly string[]).indexOf(stage);
}

/** The report context a results file's header describes (the suite, target, meter, passes and concurrency it was run with). */
export function reportContextOf(h: ResultsHeader): ReportContext {
  return {
    suite: { name: h.suite, version: h.suite_version, digest: h.suite_digest },
    target: h.target,
    meter: h.meter,
    warmup: h.warmup,
    repeats: h.repeats,
    ...(h.concurrency !== undefined ? { concurrency: h.concurrency } : {}),
    ...(h.bootstrap !== undefined ? { bootstrap: h.bootstrap } : {}),
    ...(h.bootstrap_max_units !== undefined ? { bootstrap_max_units: h.bootstrap_max_units } : {}),
    ...(h.shared === true ? { shared: true } : {}),
    ...(h.cluster !== undefined ? { cluster: h.cluster } : {}),
    ...(h.prices !== undefined ? { prices: h.prices } : {}),
  };
}

/** The Aggregator a results file's header calls for (its concurrency, shared hardware). */
export function aggregatorOf(h: ResultsHeader): Aggregator {
  return new Aggregator({ concurrency: h.concurrency, shared: h.shared, cluster: h.cluster });
}

/** Rolls the scored results of a run up into a report (see `Aggregator`). Pure. */
export function aggregate(all: readonly CaseResult[], ctx: ReportContext): BenchReport {
  const agg = new Aggregator({ concurrency: ctx.concurrency, shared: ctx.shared, cluster: ctx.cluster });
  for (const r of all) agg.add(r);
  return agg.report(ctx);
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

function mapValues<T, U>(m: Record<string, T>, f: (v: T, k: string) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, f(v, k)]));
}
