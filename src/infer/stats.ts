import { median, round } from '../core/stats.js';
import type { InferArm, InferRun, Labelled, MachinePeak, NamedRatio, PlausibilityCheck } from './types.js';
import type { EnergySource } from '../core/types.js';
import { energyLayers, roundLayers, windowsAsOne, type EnergyLayers } from '../core/energy.js';
import { usdParts, type LocalPrices, type UsdParts } from '../core/usd-parts.js';

/** The counting rules of seed 004 as pure functions of an arm's runs; every figure carries its rule's name. */

/** Rule 5's two spread statistics, by name. This kit's per-arm decode spread uses the first. */
export const SPREAD_OVER_MEDIAN = '(max − min) ÷ median';
export const SPREAD_OVER_WORST = '(best − worst) ÷ worst';

/** Rule 4/6: two thread counts whose decode medians differ by at most this fraction are a tie. */
export const THREAD_TIE_FRACTION = 0.01;

/** An arm decoding under this fraction of another arm of the same model has collapsed (threads fighting), not merely lost. */
const DECODE_COLLAPSE_FRACTION = 0.1;

/** (max − min) ÷ median of the values; `null` for none or a zero median. */
export function spreadOverMedian(values: readonly number[]): number | null {
  const m = median(values);
  if (m === null || m === 0) return null;
  return (Math.max(...values) - Math.min(...values)) / m;
}

/** (best − worst) ÷ worst, for higher-is-better values; `null` for none or a zero worst. */
export function spreadOverWorst(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const worst = Math.min(...values);
  return worst === 0 ? null : (Math.max(...values) - worst) / worst;
}

function nums(values: readonly (number | null)[]): number[] {
  return values.filter((v): v is number => v !== null && Number.isFinite(v));
}

/** The scored runs only: a warmup or cold run that slipped into `runs` is never counted. */
function scored(arm: Pick<InferArm, 'runs'>): InferRun[] {
  return arm.runs.filter((r) => r.phase === 'scored');
}

function cold(arm: Pick<InferArm, 'cold_load'>): InferRun[] {
  return arm.cold_load.filter((r) => r.phase === 'cold');
}

/** Rule 1: median over the scored runs of eval_count ÷ eval_duration; warmup discarded. */
export function decodeMedian(arm: Pick<InferArm, 'runs'>): number | null {
  return median(nums(scored(arm).map((r) => r.decode_tok_s)));
}

/** Rule 2: true prefill tok/s, the median over the COLD runs only. The warm figure is never an input. */
export function coldPrefillMedian(arm: Pick<InferArm, 'cold_load'>): number | null {
  return median(nums(cold(arm).map((r) => r.prefill_tok_s)));
}

/** Rule 2: the warm (repeated-prompt) prefill rate, a cache artifact; kept only to show it, never as prefill. */
export function cachedPrefixRateMedian(arm: Pick<InferArm, 'runs'>): number | null {
  return median(nums(scored(arm).map((r) => r.prefill_tok_s)));
}

/** Rule 3's four first-token numbers, each labelled. */
export type FirstTokenNumbers = Record<'cached_prefix_ms' | 'fresh_prompt_model_loaded_ms' | 'fully_cold_ms' | 'decode_tok_s', Labelled>;

/** Rule 3: the four numbers, never one "TTFT". */
export function firstTokenNumbers(arm: Pick<InferArm, 'runs' | 'cold_load'>): FirstTokenNumbers {
  const c = cold(arm);
  const fresh = c.map((r) => (r.ttft_ms === null || r.load_duration_ns === null ? null : r.ttft_ms - r.load_duration_ns / 1e6));
  return {
    cached_prefix_ms: {
      value: median(nums(scored(arm).map((r) => r.ttft_ms))),
      label: 'cached-prefix first token (identical prompt re-sent; not a TTFT)',
      rule: 'median of scored runs ttft_ms',
    },
    fresh_prompt_model_loaded_ms: {
      value: median(nums(fresh)),
      label: 'fresh prompt, model already loaded',
      rule: 'median over cold runs of (ttft_ms − load_duration)',
    },
    fully_cold_ms: {
      value: median(nums(c.map((r) => r.ttft_ms))),
      label: 'fully cold first token (load + prefill)',
      rule: 'median of cold runs ttft_ms',
    },
    decode_tok_s: { value: decodeMedian(arm), label: 'decode throughput, tok/s', rule: 'median of scored runs eval_count ÷ eval_duration' },
  };
}

/** Rule 3's two multipliers, each naming the pair it divides. */
interface FirstTokenRatios {
  model_loaded_rule: NamedRatio;
  cold_start_rule: NamedRatio;
  /** Which statistic each side is. */
  statistic: string;
}

export function firstTokenRatios(ft: FirstTokenNumbers): FirstTokenRatios {
  const div = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : a / b);
  return {
    model_loaded_rule: {
      value: div(ft.fresh_prompt_model_loaded_ms.value, ft.cached_prefix_ms.value),
      numerator: 'fresh prompt, model already loaded (cold ttft − load_duration)',
      denominator: 'cached-prefix first token',
    },
    cold_start_rule: {
      value: div(ft.fully_cold_ms.value, ft.cached_prefix_ms.value),
      numerator: 'fully cold first token (including the model load)',
      denominator: 'cached-prefix first token',
    },
    statistic: 'median of the cold runs ÷ median of the scored runs',
  };
}

/** A generous ceiling on a CPU's FLOP/s from cores and SIMD width, so that only impossible rates are flagged. */
export function defaultPeakFlops(cores: number, simd_bits: number, ghz = 5): MachinePeak {
  const lanes = simd_bits / 32;
  // 2 FLOP per FMA lane × 2 FMA units per core: the most any current x86/Arm core issues per cycle.
  const flops = cores * ghz * 1e9 * lanes * 2 * 2;
  return {
    flops,
    source: `default ceiling: ${cores} cores × ${ghz} GHz × ${lanes} fp32 lanes (${simd_bits}-bit SIMD) × 2 (FMA) × 2 (FMA units)`,
  };
}

/**
 * The plausibility check: 2 × parameters × tok/s against the machine's peak. Over the peak, a rate
 * measured with the prompt cached is a cached-prefix artifact; one from runs confirmed cold cannot be,
 * so one of its inputs is wrong (`inputs wrong`).
 */
export function checkPrefill(prefill_tok_s: number | null, parameter_count: number | null, peak: MachinePeak | null, confirmedCold = false): PlausibilityCheck {
  if (prefill_tok_s === null || parameter_count === null || peak === null || !(peak.flops > 0)) {
    return { prefill_tok_s, implied_flops: null, ratio_to_peak: null, plausible: null, flag: null };
  }
  const implied = 2 * parameter_count * prefill_tok_s;
  const plausible = implied <= peak.flops;
  const flag = plausible ? null : confirmedCold ? 'inputs wrong' : 'cached-prefix artifact';
  return { prefill_tok_s, implied_flops: implied, ratio_to_peak: implied / peak.flops, plausible, flag };
}

/** Every cold run carries its proof of coldness: the unload confirmed by `/api/ps`, or a fresh model load in this process. */
function coldConfirmed(arm: Pick<InferArm, 'cold_load'>): boolean {
  const c = cold(arm);
  return c.length > 0 && c.every((r) => r.fresh_load === true || r.unload?.absent_from_ps === true);
}

/** Every statistic of one arm, under its rule's name. */
export interface ArmStats {
  decode_tok_s_median: Labelled;
  prefill_tok_s_cold: Labelled;
  /** Shown to explain the trap; never summarised as prefill. */
  cached_prefix_rate_not_prefill: Labelled;
  first_token: FirstTokenNumbers;
  first_token_ratios: FirstTokenRatios;
  decode_spread: Labelled;
  plausibility: {
    peak_flops: number | null;
    peak_source: string | null;
    parameter_count: number | null;
    cold_prefill: PlausibilityCheck;
    cached_prefix: PlausibilityCheck;
  };
  energy: {
    j_per_decoded_token_median: number | null;
    decoded_tokens_per_j_median: number | null;
    joules_median: number | null;
    /** `gross`: nothing is subtracted for the machine's idle draw, so these joules include it. */
    basis: 'gross';
    source: string;
    note: string;
    /**
     * With an electricity or hardware price: the dollars of the median request, in parts: the median
     * joules × $/kWh (labelled with the energy's source) and the median e2e × $/h. No token part.
     */
    usd_per_request_median?: UsdParts & { total_usd: number | null };
    /** Scored runs whose window failed the meter's validity checks: then every energy figure above is null. */
    invalid_windows: number;
    /** Why the energy figures are null (an invalid window), else `null`. */
    null_reason: string | null;
    /**
     * The boundary layers of the scored runs' energy; `joules_per_correct` is J per decoded token (their joules
     * summed ÷ their eval_count summed). Absent when the meter has no domains and no `--pue` was given.
     */
    layers?: EnergyLayers;
  };
  scored_runs: number;
  cold_runs: number;
  warmup_discarded: number;
  /** Findings a reader must see beside the numbers (implausible prefill, contamination). */
  flags: string[];
}

/** Computes an arm's statistics. `peak` null: no check (e.g. a model in VRAM with no GPU peak given). */
export function armStats(arm: InferArm, peak: MachinePeak | null, prices?: LocalPrices, pue?: number): ArmStats {
  const s = scored(arm);
  const decode = nums(s.map((r) => r.decode_tok_s));
  const ft = firstTokenNumbers(arm);
  const coldPrefill = coldPrefillMedian(arm);
  const cachedRate = cachedPrefixRateMedian(arm);
  const confirmed = coldConfirmed(arm);
  const coldCheck = checkPrefill(coldPrefill, arm.parameter_count, peak, confirmed);
  const cachedCheck = checkPrefill(cachedRate, arm.parameter_count, peak);
  const flags: string[] = [];
  if (arm.contaminated) flags.push(`contaminated: ${arm.contamination ?? 'GPU snapshot changed'}; excluded from summaries`);
  if (coldCheck.plausible === false) {
    const over = `cold prefill ${fmt(coldPrefill)} tok/s implies ${fmtE(coldCheck.implied_flops)} FLOP/s (2 × ${fmtE(arm.parameter_count)} parameters × tok/s), over the machine peak ${fmtE(peak?.flops ?? null)}`;
    flags.push(
      confirmed
        ? `${over}; every cold run was confirmed cold (nothing cached), so this is not a cached-prefix artifact: an input is wrong — the peak (${peak?.source ?? 'n/a'}; --peak-flops sets it), the parameter count (${arm.parameter_source}), or the prompt tokens counted (a prompt_eval_count above the tokens evaluated, or a prompt_eval_duration that misses part of the work); not published as prefill`
        : `${over}: the cold runs carry no proof of coldness (no confirmed unload or fresh load), so most likely a cached-prefix artifact, not a prefill rate; otherwise the peak or the parameter count is wrong`,
    );
  }
  const sources = [...new Set(s.map((r) => r.energy_source))];
  // Energy only from valid windows: a median that skipped one would be biased, so one invalid window nulls them.
  const invalid = s.filter((r) => r.energy_validity?.valid === false);
  const valid = invalid.length === 0;
  const joules_median = valid ? median(nums(s.map((r) => r.energy_j))) : null;
  const source: EnergySource = sources.length === 1 ? sources[0]! : sources.length === 0 ? 'none' : 'mixed';
  const usd = prices ? usdParts({ tokens_usd: null, tokens_billed: false, joules: joules_median, energy_source: source, wall_ms: median(s.map((r) => r.e2e_ms)) }, prices) : null;
  return {
    decode_tok_s_median: { value: decodeMedian(arm), label: 'decode tok/s', rule: 'median over scored runs of eval_count ÷ eval_duration (warmup discarded)' },
    prefill_tok_s_cold: {
      value: coldCheck.plausible === false ? null : coldPrefill,
      label: 'true prefill tok/s',
      rule: 'median over cold runs only of prompt_eval_count ÷ prompt_eval_duration (null when flagged implausible)',
    },
    cached_prefix_rate_not_prefill: {
      value: cachedRate,
      label: 'cached-prefix rate (do not publish as prefill)',
      rule: 'median over scored runs of prompt_eval_count ÷ prompt_eval_duration with the prompt already cached',
    },
    first_token: ft,
    first_token_ratios: firstTokenRatios(ft),
    decode_spread: { value: spreadOverMedian(decode), label: 'decode spread', rule: `${SPREAD_OVER_MEDIAN} of scored decode_tok_s` },
    plausibility: {
      peak_flops: peak?.flops ?? null,
      peak_source: peak?.source ?? null,
      parameter_count: arm.parameter_count,
      cold_prefill: coldCheck,
      cached_prefix: cachedCheck,
    },
    energy: {
      j_per_decoded_token_median: valid ? median(nums(s.map((r) => r.j_per_decoded_token))) : null,
      decoded_tokens_per_j_median: valid ? median(nums(s.map((r) => r.decoded_tokens_per_j))) : null,
      joules_median,
      basis: 'gross',
      source,
      note: 'gross whole-request energy (prefill + decode, no idle subtraction) ÷ eval_count, median of scored runs; null when unmeasured',
      ...(usd ? { usd_per_request_median: { ...usd.parts, total_usd: usd.total_usd } } : {}),
      invalid_windows: invalid.length,
      null_reason: valid ? null : `${invalid.length} of ${s.length} scored run window(s) failed the validity checks (run ${invalid[0]!.index + 1}: ${invalid[0]!.energy_validity!.reasons.join('; ')})`,
      ...layersOf(s, pue),
    },
    scored_runs: s.length,
    cold_runs: cold(arm).length,
    warmup_discarded: arm.warmup_discarded.length,
    flags,
  };
}

/** The scored runs' windows as one, in layers per decoded token; gross (no idle is measured here). */
function layersOf(s: readonly InferRun[], pue: number | undefined): { layers?: EnergyLayers } {
  if (!s.some((r) => r.by_domain) && pue === undefined) return {};
  const window = windowsAsOne(s.map((r) => ({ joules: r.energy_j, by_domain: r.by_domain ?? {}, window_ms: r.e2e_ms, validity: r.energy_validity })));
  const tokens = s.some((r) => r.eval_count === null) ? 0 : s.reduce((t, r) => t + r.eval_count!, 0);
  return { layers: roundLayers(energyLayers(window, { status: 'skipped', watts: null }, tokens, pue ?? null), (v) => round(v, 9)) };
}

/** One model's thread sweep (rule 4), over its clean arms. */
export interface ThreadSweep {
  model: string;
  /** The GPU power limit the swept arms shared (`--gpu-power-limits`): thread arms are compared within one limit. */
  gpu_power_limit_w?: number;
  arms: { id: string; num_thread: number | null; decode_tok_s_median: number | null; decode_spread: number | null }[];
  excluded: { id: string; reason: string }[];
  default_arm: string | null;
  best_arm: string | null;
  best_num_thread: number | null;
  best_over_default: NamedRatio;
  /** Set when the fastest arms are within 1%: the tie is broken on stability (rule 6), and said so. */
  tie: { within: string; arms: string[]; broken_on: 'stability'; chosen: string; note: string } | null;
  note: string;
}

/** Rule 4: per model, the best thread count over the default; arms within 1% of the fastest tie, the stablest wins. */
export function threadSweep(model: string, arms: readonly InferArm[]): ThreadSweep {
  const mine = arms.filter((a) => a.model === model);
  const excluded = mine.filter((a) => a.contaminated).map((a) => ({ id: a.id, reason: a.contamination ?? 'contaminated' }));
  const rows = mine
    .filter((a) => !a.contaminated)
    .map((a) => ({
      id: a.id,
      num_thread: a.num_thread,
      decode_tok_s_median: decodeMedian(a),
      decode_spread: spreadOverMedian(nums(scored(a).map((r) => r.decode_tok_s))),
    }));
  const def = rows.find((r) => r.num_thread === null) ?? null;
  const ranked = rows.filter((r) => r.decode_tok_s_median !== null).sort((a, b) => b.decode_tok_s_median! - a.decode_tok_s_median!);
  const fastest = ranked[0] ?? null;
  let best = fastest;
  let tie: ThreadSweep['tie'] = null;
  if (fastest) {
    const top = fastest.decode_tok_s_median!;
    const tied = ranked.filter((r) => (top - r.decode_tok_s_median!) / top <= THREAD_TIE_FRACTION);
    if (tied.length > 1) {
      // Stable sort: among equal spreads the faster arm (earlier in `ranked`) stays first.
      const stablest = [...tied].sort((a, b) => (a.decode_spread ?? Infinity) - (b.decode_spread ?? Infinity))[0]!;
      const equalSpread = tied.every((r) => r.decode_spread === stablest.decode_spread);
      best = stablest;
      tie = {
        within: `${THREAD_TIE_FRACTION * 100}%`,
        arms: tied.map((r) => r.id),
        broken_on: 'stability',
        chosen: stablest.id,
        note: `${tied.map((r) => `${r.id} ${fmt(r.decode_tok_s_median)} tok/s, spread ${pct(r.decode_spread)}`).join('; ')}: within ${THREAD_TIE_FRACTION * 100}% on decode median, so ${stablest.id} is chosen ${equalSpread ? `on stability: the spreads are equal, so the faster of the tied arms is kept` : `for the smallest ${SPREAD_OVER_MEDIAN}, not for speed`}`,
      };
    }
  }
  const ratio =
    best && def && best.decode_tok_s_median !== null && def.decode_tok_s_median !== null && def.decode_tok_s_median !== 0
      ? best.decode_tok_s_median / def.decode_tok_s_median
      : null;
  return {
    model,
    arms: rows,
    excluded,
    default_arm: def?.id ?? null,
    best_arm: best?.id ?? null,
    best_num_thread: best?.num_thread ?? null,
    best_over_default: { value: ratio, numerator: `decode median at the best thread count (${best?.id ?? 'none'})`, denominator: `decode median at the default thread count (${def?.id ?? 'no clean default arm'})` },
    tie,
    note: "per model: the best count differs between models (dense vs MoE), and cross-machine ratios at different thread counts are configuration-inclusive, not silicon-pure",
  };
}

/** The summary of a run file: per-arm statistics and, per model with more than one arm, the thread sweep. */
export interface InferSummary {
  /** `stats` is null for a contaminated arm: it stays in the file, named, and out of every summary. */
  arms: { id: string; model: string; num_thread: number | null; contaminated: boolean; cpu_only_receipt: boolean | null; stats: ArmStats | null }[];
  thread_sweeps: ThreadSweep[];
  /** Arms left out of every summary figure, by name. */
  excluded_from_summaries: { id: string; reason: string }[];
  /** Findings the person running it must see at once (a collapsed decode rate); each is also in its arm's flags. */
  warnings: string[];
}

/** Per model, a warning for each clean arm decoding under {@link DECODE_COLLAPSE_FRACTION} of the fastest one's. */
function decodeCollapses(arms: readonly InferArm[]): { id: string; warning: string }[] {
  const out: { id: string; warning: string }[] = [];
  for (const model of new Set(arms.map((a) => a.model))) {
    const rows = arms
      .filter((a) => a.model === model && !a.contaminated)
      .map((a) => ({ a, tok_s: decodeMedian(a) }))
      .filter((r): r is { a: InferArm; tok_s: number } => r.tok_s !== null && r.tok_s > 0);
    const best = rows.reduce<(typeof rows)[number] | null>((b, r) => (b === null || r.tok_s > b.tok_s ? r : b), null);
    if (!best) continue;
    for (const r of rows) {
      if (r.tok_s >= best.tok_s * DECODE_COLLAPSE_FRACTION) continue;
      const threads = r.a.threads ?? r.a.num_thread;
      out.push({
        id: r.a.id,
        warning:
          `decode ${fmt(r.tok_s)} tok/s is under ${DECODE_COLLAPSE_FRACTION} of ${best.a.id}'s ${fmt(best.tok_s)} tok/s on the same model: ` +
          `oversubscribed threads (${threads === null || threads === undefined ? 'the default count' : `${threads} threads`} fighting each other or other processes for cores), not a property of the model`,
      });
    }
  }
  return out;
}

/** `peakFor` gives the peak that applies to an arm (null: no check). */
export function summarise(arms: readonly InferArm[], peakFor: (arm: InferArm) => MachinePeak | null, prices?: LocalPrices, pue?: number): InferSummary {
  // Thread arms are compared within one GPU power limit: a slower arm under a lower limit is not a thread effect.
  const limits = [...new Set(arms.map((a) => a.gpu_power_limit_w))];
  const groups = limits.map((w) => ({ w, arms: arms.filter((a) => a.gpu_power_limit_w === w) }));
  const collapses = groups.flatMap((g) => decodeCollapses(g.arms));
  const sweeps = groups.flatMap(({ w, arms: group }) =>
    [...new Set(group.map((a) => a.model))]
      .filter((m) => group.filter((a) => a.model === m).length > 1)
      .map((m) => (w === undefined ? threadSweep(m, group) : { ...threadSweep(m, group), gpu_power_limit_w: w })),
  );
  const rows = arms.map((a) => ({
    id: a.id,
    model: a.model,
    num_thread: a.num_thread,
    contaminated: a.contaminated,
    cpu_only_receipt: a.receipts.cpu_only_receipt,
    stats: a.contaminated ? null : armStats(a, peakFor(a), prices, pue),
  }));
  for (const c of collapses) rows.find((r) => r.id === c.id)?.stats?.flags.push(c.warning);
  return {
    arms: rows,
    thread_sweeps: sweeps,
    excluded_from_summaries: arms.filter((a) => a.contaminated).map((a) => ({ id: a.id, reason: a.contamination ?? 'contaminated' })),
    warnings: collapses.map((c) => `${c.id}: ${c.warning}`),
  };
}

function fmt(v: number | null): string {
  return v === null ? 'n/a' : v.toPrecision(4);
}
function fmtE(v: number | null): string {
  return v === null ? 'n/a' : v.toExponential(2);
}
/** A fraction as a percentage with two decimals; `n/a` for none. */
export function pct(v: number | null): string {
  return v === null ? 'n/a' : `${(v * 100).toFixed(2)}%`;
}
