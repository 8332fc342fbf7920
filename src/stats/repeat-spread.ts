import { spreadOf, type Spread } from './describe.js';
import type { CaseColumns } from './report-ci.js';

/** One figure's spread over passes, rounded for the report. */
export type RoundedSpread = Spread;

/**
 * Between-pass spread (`run --repeat N`): each scored pass's own figure, then mean, sample sd and
 * min–max over passes. This is the environment's variation (the same questions asked again), beside the
 * within-run bootstrap, which is the questions' variation. A figure unknown in any pass is null.
 */
export interface RepeatSpread {
  passes: number;
  /** Σ case joules per pass. */
  total_joules: RoundedSpread | null;
  joules_per_correct: RoundedSpread | null;
  latency_p50_ms: RoundedSpread | null;
  latency_p95_ms: RoundedSpread | null;
  /** Why an energy figure is null. */
  reasons: Partial<Record<'total_joules' | 'joules_per_correct' | 'latency_p50_ms' | 'latency_p95_ms', string>>;
}

export function repeatSpread(cols: CaseColumns, opts: { shared: boolean }): RepeatSpread | null {
  const passes = [...new Set(cols.pass)].sort((a, b) => a - b);
  if (passes.length < 2) return null;
  const per = passes.map((p) => {
    let j = 0;
    let unknown = false;
    let wc = 0;
    const lat: number[] = [];
    for (let i = 0; i < cols.pass.length; i++) {
      if (cols.pass[i] !== p) continue;
      const x = cols.joules[i]!;
      if (Number.isNaN(x)) unknown = true;
      else j += x;
      if (cols.passed[i] === 1) wc += cols.weight[i]!;
      const l = cols.latency_ms[i]!;
      if (!Number.isNaN(l)) lat.push(l);
    }
    lat.sort((a, b) => a - b);
    const rank = (q: number) => (lat.length === 0 ? null : lat[Math.max(1, Math.ceil((q / 100) * lat.length - 1e-9)) - 1]!);
    const energyOk = !unknown && !opts.shared;
    return { j: energyOk ? j : null, jpc: energyOk && wc > 0 ? j / wc : null, p50: rank(50), p95: rank(95) };
  });
  const reasons: RepeatSpread['reasons'] = {};
  const energyWhy = opts.shared ? 'energy attribution shared: no per-pass joules' : 'energy unknown for some cases';
  const all = <T>(xs: (T | null)[]) => (xs.some((x) => x === null) ? null : (xs as T[]));
  const sj = all(per.map((x) => x.j));
  const sjpc = all(per.map((x) => x.jpc));
  if (!sj) reasons.total_joules = energyWhy;
  if (!sjpc) reasons.joules_per_correct = sj ? 'nothing correct in some pass' : energyWhy;
  return {
    passes: passes.length,
    total_joules: sj ? rounded(spreadOf(sj), 6) : null,
    joules_per_correct: sjpc ? rounded(spreadOf(sjpc), 6) : null,
    latency_p50_ms: rounded(spreadOf(per.map((x) => x.p50)), 3),
    latency_p95_ms: rounded(spreadOf(per.map((x) => x.p95)), 3),
    reasons,
  };
}

function rounded(s: Spread | null, digits: number): Spread | null {
  if (!s) return null;
  const f = 10 ** digits;
  const r = (v: number) => Math.round(v * f) / f;
  return { n: s.n, mean: r(s.mean), sd: s.sd === null ? null : r(s.sd), min: r(s.min), max: r(s.max) };
}
