import type { PowerTraceSummary, WindowValidity } from '../core/energy.js';
import type { EnergySource } from '../core/types.js';

/** The shape of a `joulebench infer` run file (`joulebench-infer/1`), seed 004's fields per arm. */

/** One `--threads` value: a count, or `default` (Ollama's choice; for llamacpp, the physical cores this process may use that are idle). */
export type ThreadArm = number | 'default';

/** Which part of the protocol a request belonged to. */
export type InferPhase = 'cold' | 'warmup' | 'scored';

/** One timed request. Durations are Ollama's (ns); client times are ms. */
export interface InferRun {
  phase: InferPhase;
  /** 0-based within its phase. */
  index: number;
  started_utc: string;
  prompt_eval_count: number | null;
  prompt_eval_duration_ns: number | null;
  eval_count: number | null;
  eval_duration_ns: number | null;
  load_duration_ns: number | null;
  total_duration_ns: number | null;
  /** eval_count ÷ eval_duration (rule 1). */
  decode_tok_s: number | null;
  /** prompt_eval_count ÷ prompt_eval_duration. A true prefill rate only in a cold run; see `prefill_kind`. */
  prefill_tok_s: number | null;
  /** `cold`: nothing cached, a true prefill rate. `cached-prefix`: the same prompt again, a cache artifact (rule 2). */
  prefill_kind: 'cold' | 'cached-prefix';
  /** Client-side: request sent to first content token, ms. */
  ttft_ms: number | null;
  /** Client-side: request sent to the last chunk, ms. */
  e2e_ms: number;
  /** Whole-request energy from the meter; `null` when nothing measured it (never 0). */
  energy_j: number | null;
  /** Always `gross`: the meter's whole-request reading, idle power not subtracted. */
  energy_basis: 'gross';
  energy_source: EnergySource;
  below_floor: boolean;
  /** The reading per meter domain (absent when the meter has none): the arm's energy layers. */
  by_domain?: Record<string, { joules: number | null; source: EnergySource }>;
  /** How far the request window's samples can be trusted (absent when the meter keeps none); not valid: no per-token figures. */
  energy_validity?: WindowValidity;
  /** Whole-request joules ÷ eval_count; `null` when unmeasured or the window is not valid. */
  j_per_decoded_token: number | null;
  /** eval_count ÷ whole-request joules. */
  decoded_tokens_per_j: number | null;
  /** llamacpp: the library's own counters beside the Ollama-shaped fields (see docs/llamacpp.md). */
  llamacpp?: {
    prompt_tokens: number;
    prompt_tokens_reused: number;
    decode_tokens: number;
    threads_used: number;
    token_times_ms: number[];
    model_load_ms: number | null;
  };
  /** llamacpp cold runs: the model was loaded afresh in this process (a new model and context). */
  fresh_load?: true;
  /** Cold runs: how the unload was confirmed (`keep_alive: 0`, then absent from `/api/ps`). */
  unload?: { keep_alive_0: true; absent_from_ps: true; ps_polls: number };
}

/** Receipts taken for one arm (seed 004 rule 7). */
export interface ArmReceipts {
  /** `/api/ps` `size_vram` of the model after the scored runs; `null` when the model was not listed. */
  size_vram: number | null;
  /** True when `size_vram` is 0: the model sat in system memory, not on a GPU. */
  cpu_only_receipt: boolean | null;
  /** `/api/ps` `expires_at`, converted to UTC (`local-offset-to-utc`). */
  expires_at_utc: string | null;
  /** GPU snapshot command output before the cold runs, verbatim; `null` when it could not run. */
  nvidia_before: string | null;
  /** GPU snapshot command output after the scored runs, verbatim. */
  nvidia_after: string | null;
  /** `identical` (byte for byte), `changed` (the arm is contaminated), or `unavailable`. */
  gpu_snapshot: 'identical' | 'changed' | 'unavailable';
  gpu_snapshot_error: string | null;
}

/** One model at one thread count. */
export interface InferArm {
  /** `model@t=default` or `model@t=8`. */
  id: string;
  model: string;
  /** `null`: the default arm (Ollama: llama.cpp chooses; llamacpp: see `threads_source`; rule 4). */
  num_thread: number | null;
  /** llamacpp: the thread count llama.cpp was given, and how it was chosen. */
  threads?: number;
  threads_source?: string;
  /** `--gpu-power-limits`: the power limit every visible GPU ran this arm under, W. */
  gpu_power_limit_w?: number;
  parameter_count: number | null;
  parameter_source: string;
  started_utc: string;
  finished_utc: string;
  cold_load: InferRun[];
  warmup_discarded: InferRun[];
  runs: InferRun[];
  receipts: ArmReceipts;
  /** `--power-trace`: the arm's power over time (idle, warmup: cold and warmup runs, scored), downsampled. */
  power_trace?: PowerTraceSummary;
  /** A changed GPU snapshot: the arm is kept, named, and excluded from every summary. */
  contaminated: boolean;
  contamination: string | null;
}

/** A number with the rule that produced it, so it is never quoted under another name. */
export interface Labelled {
  value: number | null;
  label: string;
  rule: string;
}

/** A ratio that names its numerator and denominator (rule 3). */
export interface NamedRatio {
  value: number | null;
  numerator: string;
  denominator: string;
}

/** The machine's peak FLOP/s that prefill rates are checked against. */
export interface MachinePeak {
  flops: number;
  source: string;
}

/** Result of the plausibility check on one prefill figure. */
export interface PlausibilityCheck {
  prefill_tok_s: number | null;
  /** 2 × parameters × tokens/s. */
  implied_flops: number | null;
  ratio_to_peak: number | null;
  /** false: more FLOP/s than the machine can do. */
  plausible: boolean | null;
  /** When implausible: a cached-prompt rate is a `cached-prefix artifact`; a confirmed-cold one means `inputs wrong`. */
  flag: 'cached-prefix artifact' | 'inputs wrong' | null;
}
