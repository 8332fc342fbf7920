import type { Comparison, CompareSide } from './compare.js';
import { JoulebenchError } from './errors.js';
import { quote } from './one-line.js';

/** The comparison figures a gate may test: the deltas `compare` computes. */
export const GATE_METRICS = ['joules_per_correct_pct', 'latency_p95_pct', 'accuracy_pp_delta', 'usd_per_correct_pct', 'total_usd_pct'] as const;
export type GateMetric = (typeof GATE_METRICS)[number];

export type GateOperator = '>' | '>=' | '<' | '<=';

/** One threshold: the gate fails when `metric OP threshold` holds. */
export interface GateCondition {
  metric: GateMetric;
  op: GateOperator;
  threshold: number;
  /** The condition as written (trimmed), for messages. */
  text: string;
}

/** A condition that fired, with the value that fired it (`null`: the figure was n/a, which also fails). */
export interface GateFailure {
  condition: GateCondition;
  value: number | null;
  message: string;
}

const CONDITION = /^([a-z0-9_]+)\s*(>=|<=|>|<)\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)$/i;

/**
 * Parses `--fail-on` (e.g. `joules_per_correct_pct>5,accuracy_pp_delta<-1`): comma-separated
 * `metric OP number`. Anything else throws E_USAGE naming the bad part (exit 2).
 */
export function parseGate(expr: string): GateCondition[] {
  const parts = expr.split(',').map((p) => p.trim());
  if (expr.trim() === '' || parts.some((p) => p === '')) {
    throw new JoulebenchError('E_USAGE', `--fail-on ${quote(expr)}: empty condition (write metric>number, comma-separated)`);
  }
  return parts.map((text) => {
    const m = CONDITION.exec(text);
    if (!m) {
      throw new JoulebenchError('E_USAGE', `--fail-on: cannot read ${quote(text)} (expected metric OP number, OP one of > >= < <=)`);
    }
    const metric = m[1]!;
    if (!(GATE_METRICS as readonly string[]).includes(metric)) {
      throw new JoulebenchError('E_USAGE', `--fail-on: unknown metric ${quote(metric)} in ${quote(text)} (known: ${GATE_METRICS.join(', ')})`);
    }
    return { metric: metric as GateMetric, op: m[2] as GateOperator, threshold: Number(m[3]), text };
  });
}

/**
 * Checks a comparison against the conditions. Pure. A figure that is n/a (null: e.g. nothing was correct)
 * cannot be shown to pass, so it fails the gate with that reason.
 */
export function checkGate(
  values: Readonly<Record<GateMetric, number | null>>,
  conditions: readonly GateCondition[],
  opts: {
    significant?: Readonly<Record<GateMetric, { low: number; high: number; level: number } | null>>;
    /** Why a figure is n/a (which run lacks it), for the message. */
    why?: Partial<Record<GateMetric, string>>;
  } = {},
): GateFailure[] {
  const failures: GateFailure[] = [];
  for (const c of conditions) {
    if (opts.significant) {
      failures.push(...significantFailure(c, values[c.metric], opts.significant[c.metric]));
      continue;
    }
    const v = values[c.metric];
    if (v === null || !Number.isFinite(v)) {
      const why = opts.why?.[c.metric];
      failures.push({ condition: c, value: null, message: `${c.text}: ${c.metric} is n/a${why ? ` (${why})` : ''}, so the gate cannot pass` });
    } else if (HOLDS[c.op](v, c.threshold)) {
      failures.push({ condition: c, value: v, message: `${c.text}: ${c.metric} is ${v}` });
    }
  }
  return failures;
}

const HOLDS: Record<GateOperator, (v: number, t: number) => boolean> = {
  '>': (v, t) => v > t,
  '>=': (v, t) => v >= t,
  '<': (v, t) => v < t,
  '<=': (v, t) => v <= t,
};

/**
 * `--significant`: the condition trips only when the whole interval lies past the threshold (for `>`
 * its low end, for `<` its high end), so noise alone never fails a build. No interval: the gate cannot
 * show the figure is fine, so it fails, saying why.
 */
function significantFailure(c: GateCondition, value: number | null, i: { low: number; high: number; level: number; method?: string } | null): GateFailure[] {
  if (!i) return [{ condition: c, value, message: `${c.text}: no interval for ${c.metric} (runs not paired), so --significant cannot pass` }];
  const end = c.op === '>' || c.op === '>=' ? i.low : i.high;
  if (!HOLDS[c.op](end, c.threshold)) return [];
  const what = 'method' in i && i.method === 'degenerate' ? 'degenerate interval (identical values)' : `${Math.round(i.level * 100)} % interval`;
  return [{ condition: c, value, message: `${c.text}: ${c.metric} is ${value} and its whole ${what} [${i.low}, ${i.high}] is past ${c.threshold}` }];
}

/** The figure each gate metric is made from, on each side of a comparison. */
const SOURCE_FIGURE: Record<GateMetric, keyof CompareSide> = {
  joules_per_correct_pct: 'joules_per_correct',
  latency_p95_pct: 'latency_p95_ms',
  accuracy_pp_delta: 'accuracy_pct',
  usd_per_correct_pct: 'usd_per_correct',
  total_usd_pct: 'total_usd',
};

/** Why each n/a gate metric of a comparison is n/a: which run lacks the figure, or what keeps them apart. Pure. */
export function gateWhyNa(c: Comparison): Partial<Record<GateMetric, string>> {
  const out: Partial<Record<GateMetric, string>> = {};
  for (const metric of GATE_METRICS) {
    if (c[metric] !== null) continue;
    const figure = SOURCE_FIGURE[metric];
    const base = c.baseline[figure];
    const cand = c.candidate[figure];
    if (base === null || base === undefined) out[metric] = cand === null || cand === undefined ? `neither run has ${figure}` : `the baseline has no ${figure}`;
    else if (cand === null || cand === undefined) out[metric] = `the candidate has no ${figure}`;
    else if (metric === 'joules_per_correct_pct' && c.energy_sources_match === false) out[metric] = `energy sources differ: ${c.baseline.energy_source ?? '?'} vs ${c.candidate.energy_source ?? '?'}`;
    else if (base === 0) out[metric] = `the baseline's ${figure} is 0: no percentage change from 0`;
  }
  return out;
}
