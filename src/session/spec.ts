import type { LocalPrices } from '../core/usd-parts.js';
import type { MeterOptions } from '../meters/registry.js';
import type { LoadOptions } from '../load/options.js';
import type { JudgeFlags } from './judge-setup.js';
import type { TargetFlags } from './setup.js';

/** Everything one run needs, as plain JSON data; an API key is only named (`credentialsRef`: `env:NAME`). */
export interface SessionSpec extends TargetFlags, JudgeFlags {
  /** Settings merged into the target spec (a sweep arm's `cache_capacity`, `neural: {energy_j}`…). */
  target_options?: Record<string, unknown>;
  /** Run config: a YAML file, or an already-parsed config object with the label its messages name. */
  config?: string | InlineConfig;
  /** Meter name (default `auto`) and its settings, already resolved from flags and environment. */
  meter?: string;
  meter_options?: MeterOptions;
  /** Idle calibration window, ms; 0 skips it. Default: the runner's (1000). */
  idle_ms?: number;
  /** Unscored passes first; default 1 for the cascade, 0 for other targets. */
  warmup?: number;
  /** Only cases whose id, a tag or the dataset matches this regular expression (recorded in the suite version and digest). */
  filter?: string;
  /** Only the first N cases, after `filter` (recorded in the suite version and digest). */
  limit?: number;
  /** Scored passes (default 1). */
  repeat?: number;
  /** Bootstrap resamples for the report's intervals (default 2000; 0 turns the bootstrap off). */
  bootstrap?: number;
  /** The most cases the intervals are bootstrapped over (default 20,000; `'inf'`: any number; 0: never); above it, large-sample intervals. */
  bootstrap_max_units?: number | 'inf';
  /** Other work shares the hardware (a sweep's `--parallel-arms`): energy attribution `shared`. */
  shared?: boolean;
  /** `--cluster`: the intervals resample questions or subjects instead of cases. */
  cluster?: 'question' | 'subject';
  /** `--pue`: the facility's PUE (the report's modelled facility layer). */
  pue?: number;
  /** `--power-trace FILE.csv`: where the power time series is written (also embedded, downsampled, in the report). */
  power_trace?: string;
  /** Cases in flight at once (default 1). */
  concurrency?: number;
  /** Report JSON file; absent: the report is only returned. */
  out?: string;
  /** Results JSONL (default: next to the report, else under ./.joulebench/runs/). */
  results?: string;
  /** Receipt JSON (default: next to the report). */
  receipt?: string;
  /** Continue an interrupted run: `true` (from `results`) or the results file to continue. */
  resume?: boolean | string;
  /** Start afresh even over an interrupted run's results file. */
  overwrite?: boolean;
  /** Record in the history database: `false` skips it; default the database at $JOULEBENCH_HOME. */
  history?: false | { path?: string };
  /** Free labels written into the receipt (a sweep's id, the arm's name); never secrets. */
  labels?: Record<string, string>;
  /** Electricity and hardware prices (over the config's `prices`): the report's dollars in parts. */
  prices?: LocalPrices;
  /** Carbon intensity for the report's `co2e` block: gCO2e/kWh, or a region code (`FRA`, `WOR`…). */
  grid_intensity?: string;
  /** The command line that asked for the run, for the receipt (default none). */
  argv?: string[];
  /** `false` (`--no-store-prompts`): case lines keep no prompt, for private data (header `prompts: "none"`). */
  store_prompts?: boolean;
  /** Stop after this many consecutive target failures (default 20; 0 never stops). */
  max_errors?: number;
  /** An open-loop load run (`--request-rate`); `num_requests` defaults to the suite's case count. */
  load?: Omit<LoadOptions, 'num_requests'> & { num_requests?: number };
}

/** A config given inline (a sweep arm) instead of as a file; `where` names it in error messages. */
export interface InlineConfig {
  where: string;
  config: unknown;
}
