import type { PreflightProblem } from './preflight.js';
import { z } from 'zod';
import { attempt } from './attempt.js';
import { JoulebenchError } from '../core/errors.js';
import { summarizeResults, type SolverSummary } from './aggregate.js';
import { localPriceProblem, type LocalPrices } from '../core/usd-parts.js';
import type { IdleCalibration, PowerTraceSummary } from '../core/energy.js';
import { DATAPOINTS_FORMAT } from './datapoints-file.js';
import type { Datapoint } from './oracle.js';
import { readTextFile } from '../read-text.js';

/** The results JSON of `joulebench code`: every datapoint, and per-solver aggregates with frontier marks. */
export interface CodeResults {
  format: 'joulebench-code-results/1';
  /** `dir`: the suite folder's absolute path (absent for SWE-bench and older files), where the report reads task prompts back. */
  suite: { name: string; source: string; digest: string; tasks: string[]; dir?: string };
  config: {
    solvers: ({ id: string } & Record<string, unknown>)[];
    rollouts: number;
    sandbox: Record<string, unknown>;
    meter: { id: string; source: string; floor_ms: number } & Record<string, unknown>;
    idle: IdleCalibration | null;
    timeout_s: number | null;
    default_timeout_s: number;
    /** Memory limit of each solver and test run, MiB (absent in files from before it existed). */
    memory_mb?: number;
    scrubbed_env: string[];
    /** Where the tests ran when not in the local sandbox: `{ kind: 'docker', image_naming, … }` (`--runner docker`). */
    runner?: { kind: string } & Record<string, unknown>;
    /** What the preflight found unable to run inside the sandbox (empty: everything runs). */
    preflight?: PreflightProblem[];
    /** The run's id, recorded with every fix a cascade: solver stores. */
    run_id?: string;
    /** `--energy-budget`: J per task attempt for `resolution_under_budget_pct` (absent: none). */
    energy_budget_j?: number;
    /** `--electricity-usd-per-kwh`, `--hardware-usd-per-hour`: the rows' dollars in parts (absent: none). */
    prices?: LocalPrices;
    /** `--pue`: the facility's PUE behind the rows' modelled facility layer (absent: none). */
    pue?: number;
  };
  solvers: SolverSummary[];
  datapoints: Datapoint[];
  /** `--power-trace`: the run's power over time, downsampled (the CSV has every row). */
  power_trace?: PowerTraceSummary;
  /** Volatile facts (host, UTC times, versions), added by the CLI. */
  receipt?: Record<string, unknown>;
}

/** Just enough shape to rebuild the aggregates; extra fields pass through. */
const resultsSchema = z.looseObject({
  format: z.literal('joulebench-code-results/1'),
  suite: z.looseObject({ name: z.string(), tasks: z.array(z.string()) }),
  config: z.looseObject({ solvers: z.array(z.looseObject({ id: z.string() })), rollouts: z.number().int().positive(), energy_budget_j: z.number().positive().finite().optional(), pue: z.number().min(1).max(100).optional(),
    prices: z.unknown().refine((p) => p === undefined || localPriceProblem(p) === null, 'must be {electricity_usd_per_kwh, hardware_usd_per_hour} numbers >= 0').optional(),
  }),
  datapoints: z.array(
    z.looseObject({
      task: z.string(),
      solver: z.string(),
      rollout: z.number().int().nonnegative(),
      valid: z.boolean(),
      resolved: z.boolean(),
      joules: z.number().nullable(),
      net_joules: z.number().nullable(),
      cost_usd: z.number().nullable(),
      below_floor: z.boolean(),
      escapes: z.array(z.string()),
      tests_modified: z.array(z.string()),
    }),
  ),
});

/** Reads a results file, its aggregates recomputed from the datapoints (so a report agrees with what was recorded). */
export function readCodeResults(path: string): CodeResults {
  const text = readTextFile(path, 'E_RESULTS');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    raw = fromDatapointsJsonl(text);
    if (raw === undefined) throw new JoulebenchError('E_RESULTS', `${path}: not valid JSON (${(e as Error).message})`);
  }
  const parsed = resultsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.map(String).join('.') || '(top level)';
    throw new JoulebenchError('E_RESULTS', `${path}: ${key}: ${issue?.message ?? 'not a joulebench code results file'}`);
  }
  const results = parsed.data as unknown as CodeResults;
  results.solvers = summarizeResults(results);
  return results;
}

/** A streamed datapoints file as a results document (a last line cut short is dropped); `undefined` if it is not one. */
function fromDatapointsJsonl(text: string): unknown {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const parse = (l: string): Record<string, unknown> | undefined => {
    const v = attempt(() => JSON.parse(l) as unknown, undefined);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  };
  const head = lines[0] === undefined ? undefined : parse(lines[0]);
  if (!head || head.record !== 'header' || head.format !== DATAPOINTS_FORMAT) return undefined;
  const datapoints = lines
    .slice(1)
    .map(parse)
    .filter((d): d is Record<string, unknown> => d !== undefined && d.record === 'datapoint')
    .map(({ record: _record, ...d }) => d);
  return { format: 'joulebench-code-results/1', suite: head.suite, config: head.config, solvers: [], datapoints };
}
