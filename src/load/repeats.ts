import { isInterval, type NoInterval } from '../stats/interval.js';
import { coefficientOfVariation, pairedTInterval, tInterval, type TInterval } from '../stats/student-t.js';
import type { LoadBlock } from './block.js';
import { hasFormat, readRunDoc } from './sweep-file.js';

export const LOAD_REPEATS_FORMAT = 'joulebench-load-repeats/1';
export const LOAD_REPEATS_COMPARISON_FORMAT = 'joulebench-load-repeats-comparison/1';
/** Confidence level of the intervals over runs. */
export const REPEATS_LEVEL = 0.95;

/** One run of a repeated load run, as the summary reads it. */
export interface RepeatRun {
  accuracy_pct: number | null;
  load: LoadBlock;
}

/** A t-interval rounded for a report, or why there is none. */
export type RepeatInterval = Pick<TInterval, 'low' | 'high' | 'level' | 'method' | 't_critical'> | NoInterval;

/** One figure over the runs of a repeated load run. */
export interface RepeatFigure {
  values: (number | null)[];
  mean: number | null;
  /** Sample standard deviation (n − 1). */
  sd: number | null;
  /** sd ÷ |mean|. */
  cv: number | null;
  ci: RepeatInterval;
}

/** What `run --request-rate R --runs N -o NAME.json` writes: per run its report and results file, and every figure over the runs. */
export interface LoadRepeatsDoc {
  format: typeof LOAD_REPEATS_FORMAT;
  request_rate: number | 'inf';
  runs: number;
  cooldown_s: number;
  reports: (string | null)[];
  results: string[];
  level: number;
  figures: Record<string, RepeatFigure>;
  notes: string[];
}

/** Figures of the energy block, then the block's own figures from energy: no statistics over runs measured differently. */
const ENERGY_FIGURES = ['joules_per_output_token', 'net_joules_per_output_token', 'output_tokens_per_joule', 'avg_power_w'] as const;
const BLOCK_ENERGY_FIGURES = ['joules_per_good_request', 'goodput_per_watt', 'good_output_tokens_per_joule'] as const;

/** Every figure of one run, by name, in a fixed order (`accuracy_pct`, the serving block's numbers, energy). */
function runFigures(r: RepeatRun): Map<string, number | null> {
  const out = new Map<string, number | null>();
  out.set('accuracy_pct', r.accuracy_pct);
  for (const [k, v] of Object.entries(r.load.serving)) if (typeof v === 'number' || (v === null && k !== 'slo')) out.set(k, v as number | null);
  const e = r.load.energy as unknown as Record<string, unknown>;
  for (const k of ENERGY_FIGURES) out.set(k, typeof e[k] === 'number' ? (e[k] as number) : null);
  for (const k of BLOCK_ENERGY_FIGURES) out.set(k, r.load[k] ?? null);
  return out;
}

const isEnergyFigure = (name: string): boolean => [...ENERGY_FIGURES, ...BLOCK_ENERGY_FIGURES].some((k) => k === name);

/** Why the runs' energy figures cannot be pooled (mixed energy sources or window kinds), or null. */
function energyMismatch(runs: readonly RepeatRun[]): string | null {
  const sources = [...new Set(runs.map((r) => r.load.energy.source))];
  if (sources.length > 1) return `energy measured differently across runs (${sources.join(', ')})`;
  const steady = new Set(runs.map((r) => r.load.energy.steady_state));
  if (steady.size > 1) return 'some runs measured the steady-state window and others the whole run';
  return null;
}

const sig = (v: number): number => {
  const x = Number(v.toPrecision(10));
  return Object.is(x, -0) ? 0 : x;
};

function rounded(ci: TInterval | NoInterval): RepeatInterval {
  if (!isInterval(ci)) return ci;
  const c = ci as TInterval;
  return { low: sig(c.low), high: sig(c.high), level: c.level, method: c.method, t_critical: sig(c.t_critical) };
}

function nullRuns(values: readonly (number | null)[]): string {
  const at = values.flatMap((v, i) => (v === null ? [i + 1] : []));
  if (at.length === values.length) return 'no value in any run';
  return `no value in run${at.length === 1 ? '' : 's'} ${at.join(', ')}`;
}

/** Every figure over the runs (values, mean, sd, cv, t-interval); none where a run lacks it or energy was measured differently. Pure. */
export function repeatSummary(runs: readonly RepeatRun[], level = REPEATS_LEVEL): { figures: Record<string, RepeatFigure>; notes: string[] } {
  const per = runs.map(runFigures);
  const names = [...new Set(per.flatMap((m) => [...m.keys()]))];
  const energyWhy = energyMismatch(runs);
  const notes: string[] = [];
  if (energyWhy) notes.push(`${energyWhy}: no statistics for the energy figures`);
  const bound = runs.flatMap((r, i) => (r.load.scheduling.client_bottleneck ? [i + 1] : []));
  if (bound.length > 0) notes.push(`the client limited the request rate in run${bound.length === 1 ? '' : 's'} ${bound.join(', ')}`);
  const figures: Record<string, RepeatFigure> = {};
  for (const name of names) {
    const values = per.map((m) => m.get(name) ?? null);
    const why = values.some((v) => v === null) ? nullRuns(values) : energyWhy !== null && isEnergyFigure(name) ? energyWhy : null;
    if (why !== null) {
      figures[name] = { values, mean: null, sd: null, cv: null, ci: { reason: why } };
      continue;
    }
    const xs = values as number[];
    const ci = tInterval(xs, level);
    const cv = coefficientOfVariation(xs);
    figures[name] = {
      values,
      mean: sig(xs.reduce((s, v) => s + v, 0) / xs.length),
      sd: isInterval(ci) ? sig((ci as TInterval).sd) : null,
      cv: cv === null ? null : sig(cv),
      ci: rounded(ci),
    };
  }
  return { figures, notes };
}

/** One figure of two repeated load runs, paired run by run. */
export interface PairedRepeatFigure {
  baseline: (number | null)[];
  candidate: (number | null)[];
  /** candidate − baseline, run by run. */
  differences: (number | null)[];
  mean_difference: number | null;
  ci: RepeatInterval;
}

/** The comparison of two repeated load runs, paired run i with run i. */
export interface LoadRepeatsComparison {
  format: typeof LOAD_REPEATS_COMPARISON_FORMAT;
  pairing: string;
  baseline_runs: number;
  candidate_runs: number;
  paired_runs: number;
  level: number;
  figures: Record<string, PairedRepeatFigure>;
  notes: string[];
}

/**
 * Run i of the baseline paired with run i of the candidate (runs made in the same order share the machine's
 * drift): per figure the differences and their paired t-interval; unequal counts pair the common prefix. Pure.
 */
export function pairedRepeats(baseline: readonly RepeatRun[], candidate: readonly RepeatRun[], level = REPEATS_LEVEL): LoadRepeatsComparison {
  const k = Math.min(baseline.length, candidate.length);
  const a = baseline.slice(0, k);
  const b = candidate.slice(0, k);
  const notes: string[] = [];
  if (baseline.length !== candidate.length) {
    const [longer, n] = baseline.length > candidate.length ? ['baseline', baseline.length] : ['candidate', candidate.length];
    const left = n === k + 1 ? `run ${n} is` : `runs ${k + 1}–${n} are`;
    notes.push(`the baseline has ${baseline.length} runs and the candidate ${candidate.length}: runs 1–${k} are paired, the ${longer}'s ${left} left out`);
  }
  const energyWhy = energyMismatch([...a, ...b]);
  if (energyWhy) notes.push(`${energyWhy}: no differences for the energy figures`);
  const pa = a.map(runFigures);
  const pb = b.map(runFigures);
  const inA = new Set(pa.flatMap((m) => [...m.keys()]));
  const inB = new Set(pb.flatMap((m) => [...m.keys()]));
  const names = [...inA].filter((n) => inB.has(n));
  for (const [side, own, other] of [['baseline', inA, inB], ['candidate', inB, inA]] as const) {
    const only = [...own].filter((n) => !other.has(n));
    if (only.length > 0) notes.push(`only the ${side} has ${only.join(', ')}: not compared`);
  }
  const figures: Record<string, PairedRepeatFigure> = {};
  for (const name of names) {
    const xa = pa.map((m) => m.get(name) ?? null);
    const xb = pb.map((m) => m.get(name) ?? null);
    const withheld = energyWhy !== null && isEnergyFigure(name);
    const differences = xa.map((x, i) => (withheld || x === null || xb[i] === null ? null : sig(xb[i]! - x)));
    const why = withheld ? energyWhy : differences.some((d) => d === null) ? nullRuns(differences) : null;
    if (why !== null) {
      figures[name] = { baseline: xa, candidate: xb, differences, mean_difference: null, ci: { reason: why } };
      continue;
    }
    const ci = pairedTInterval(xa as number[], xb as number[], level);
    const mean = (xb as number[]).reduce((s, v) => s + v, 0) / k - (xa as number[]).reduce((s, v) => s + v, 0) / k;
    figures[name] = { baseline: xa, candidate: xb, differences, mean_difference: sig(mean), ci: rounded(ci) };
  }
  return {
    format: LOAD_REPEATS_COMPARISON_FORMAT,
    pairing: 'run i of the baseline with run i of the candidate (paired t-interval of the differences)',
    baseline_runs: baseline.length,
    candidate_runs: candidate.length,
    paired_runs: k,
    level,
    figures,
    notes,
  };
}

/** True when `path` is a repeated load run's JSON document. */
export const isLoadRepeatsFile = (path: string): boolean => hasFormat(path, LOAD_REPEATS_FORMAT);

/**
 * The results files a repeated load run's document names, in run order, resolved against its folder.
 * The figures are rebuilt from these files, never taken from the document.
 */
export function loadRepeatsRunFiles(path: string, exists: (p: string) => boolean): string[] {
  const { doc, at, bad } = readRunDoc<LoadRepeatsDoc>(path, LOAD_REPEATS_FORMAT, 'a repeated load run', 'run');
  return doc.results.map((res, i) => {
    const r = at(res);
    if (!exists(r)) bad(`results[${i}]`, `${r} does not exist`);
    return r;
  });
}
