import { nearestRankSorted, round } from '../core/stats.js';

import { spreadOf, type Spread } from './describe.js';
import type { CaseColumns } from './report-ci.js';

/** Between-pass spread (`run --repeat N`): the environment's variation, beside the bootstrap's; null when unknown in a pass. */
export interface RepeatSpread {
  passes: number;
  /** Σ case joules per pass. */
  total_joules: Spread | null;
  joules_per_correct: Spread | null;
  latency_p50_ms: Spread | null;
  latency_p95_ms: Spread | null;
  /** Why an energy figure is null. */
  reasons: Partial<Record<'total_joules' | 'joules_per_correct' | 'latency_p50_ms' | 'latency_p95_ms', string>>;
}

/** `no_pass_energy`: why no pass has joules of its own (overlapped cases, one suite-window reading), else `null`. */
export function repeatSpread(cols: CaseColumns, opts: { no_pass_energy: string | null }): RepeatSpread | null {
  // Each column read once (it may be materialised per read); one walk adds each case to its pass: O(cases).
  const { pass, joules, passed, weight, latency_ms: latency } = cols;
  const n = pass.length;
  const passes = [...new Set(pass)].sort((a, b) => a - b);
  if (passes.length < 2) return null;
  const slot = new Map(passes.map((p, k) => [p, k]));
  const P = passes.length;
  const j = new Float64Array(P);
  const unknown = new Uint8Array(P);
  const wc = new Float64Array(P);
  // Known latencies grouped by pass: counted, then placed at each pass's offset.
  const count = new Float64Array(P + 1);
  const passOf = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const k = slot.get(pass[i]!)!;
    passOf[i] = k;
    if (!Number.isNaN(latency[i]!)) count[k + 1]!++;
  }
  for (let k = 0; k < P; k++) count[k + 1]! += count[k]!;
  const lat = new Float64Array(count[P]!);
  const fill = count.slice(0, P);
  for (let i = 0; i < n; i++) {
    const k = passOf[i]!;
    const x = joules[i]!;
    if (Number.isNaN(x)) unknown[k] = 1;
    else j[k]! += x;
    if (passed[i] === 1) wc[k]! += weight[i]!;
    const l = latency[i]!;
    if (!Number.isNaN(l)) lat[fill[k]!++] = l;
  }
  const per = passes.map((_, k) => {
    const own = lat.subarray(count[k]!, count[k + 1]!).sort();
    const energyOk = unknown[k] === 0 && opts.no_pass_energy === null;
    return { j: energyOk ? j[k]! : null, jpc: energyOk && wc[k]! > 0 ? j[k]! / wc[k]! : null, p50: nearestRankSorted(own, 50), p95: nearestRankSorted(own, 95) };
  });
  const reasons: RepeatSpread['reasons'] = {};
  const energyWhy = opts.no_pass_energy ?? 'energy unknown for some cases';
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
  const r = (v: number) => round(v, digits);
  return { n: s.n, mean: r(s.mean), sd: s.sd === null ? null : r(s.sd), min: r(s.min), max: r(s.max) };
}
