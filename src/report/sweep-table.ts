import { pc } from './colors.js';
import type { SweepComparison } from '../sweep/comparison.js';
import type { Interval } from '../stats/interval.js';
import { fmtJoules, fmtMs, fmtP, fmtPct, fmtSigned, fmtUsd, table } from './format.js';

const pm = (v: number | null, i: Interval | null, f: (x: number) => string): string =>
  v === null ? 'n/a' : !i ? `${f(v)}` : i.method === 'degenerate' ? `${f(v)} (degenerate)` : `${f(v)} [${f(i.low)}, ${f(i.high)}]`;

/** The sweep's comparison for a terminal: per suite, the arms with intervals, the frontiers, and each arm against the baseline. */
export function renderSweepTable(c: SweepComparison, opts: { failuresShown?: boolean } = {}): string {
  const out: string[] = [pc.bold(`joulebench sweep ${c.sweep.name}`) + pc.dim(` (${c.sweep.id}) · intervals 95 % (degenerate: identical values, none stated), significance at α = ${c.alpha}${pAdjustText(c)}`)];
  for (const s of c.suites) {
    out.push('', pc.bold(`suite ${s.suite}`));
    const mark = (arm: string, axis: 'energy' | 'cost') =>
      s.frontiers[axis].frontier.includes(arm) ? 'frontier' : s.frontiers[axis].not_distinguishable.includes(arm) ? 'not distinguishable' : '';
    const rows = [[pc.dim('arm'), pc.dim('accuracy'), pc.dim('J / correct'), pc.dim('$ / correct'), pc.dim('p95'), pc.dim('energy'), pc.dim('J front'), pc.dim('$ front')]];
    for (const a of s.arms) {
      rows.push([
        a.arm + (a.arm === s.baseline ? pc.dim(' (baseline)') : ''),
        pm(a.accuracy_pct, a.accuracy_ci, (x) => fmtPct(x)),
        pm(a.joules_per_correct, a.joules_per_correct_ci, fmtJoules),
        pm(a.usd_per_correct, a.usd_per_correct_ci, fmtUsd),
        pm(a.latency_p95_ms, a.latency_p95_ci, fmtMs),
        a.energy_source + (a.energy_attribution === 'shared' ? ' shared' : ''),
        mark(a.arm, 'energy'),
        mark(a.arm, 'cost'),
      ]);
    }
    out.push(table(rows, ['l', 'r', 'r', 'r', 'r', 'l', 'l', 'l']));
    for (const axis of ['energy', 'cost'] as const) {
      const f = s.frontiers[axis];
      if (f.withheld) out.push(pc.yellow(`  ${axis} frontier withheld: ${f.withheld}`));
      for (const n of f.not_placed) out.push(pc.dim(`  ${axis} frontier: ${n.arm} not placed (${n.reason})`));
    }
    if (s.vs_baseline.length > 0) {
      out.push('', pc.dim(`  against the baseline ${s.baseline} (paired):`));
      const m = s.vs_baseline.filter((v) => v.accuracy_p_value !== null).length;
      if (c.p_adjust === 'holm' && m > 1) out.push(pc.dim(`  ${m} comparisons: McNemar p Holm-adjusted (raw p in the JSON); J/correct, $ and p95 verdicts from ${Number((100 - (100 * c.alpha) / m).toPrecision(6))} % intervals (α/${m}, Bonferroni)`));
      const vr = [[pc.dim('arm'), pc.dim('accuracy Δ'), pc.dim(c.p_adjust === 'holm' ? 'McNemar p (Holm)' : 'McNemar p'), pc.dim('verdict'), pc.dim('J/correct Δ'), pc.dim('verdict'), pc.dim('p95 Δ'), pc.dim('verdict'), pc.dim('$/correct Δ'), pc.dim('verdict'), pc.dim('total $ Δ'), pc.dim('verdict')]];
      for (const v of s.vs_baseline) {
        if (v.withheld) {
          vr.push([v.arm, 'withheld', '', ...Array<string>(9).fill('withheld')]);
          continue;
        }
        vr.push([
          v.arm,
          fmtSigned(v.accuracy_pp_delta, ' pp'),
          fmtP(v.accuracy_p_adjusted ?? v.accuracy_p_value),
          v.accuracy_verdict,
          ...(['joules_per_correct', 'latency_p95', 'usd_per_correct', 'total_usd'] as const)
            .flatMap((k) => [fmtSigned(v[`${k}_pct`], ' %'), v[`${k}_verdict`]]),
        ]);
      }
      out.push(table(vr, ['l', 'r', 'r', 'l', 'r', 'l', 'r', 'l', 'r', 'l', 'r', 'l']));
      for (const v of s.vs_baseline) if (v.reason) out.push(pc.dim(`  ${v.arm}: ${v.reason}`));
    }
  }
  // `sweep` printed each failure, with its error, as it happened: here only the count's names.
  for (const m of c.missing) out.push(pc.yellow(`missing: ${m.arm} × ${m.suite}: ${opts.failuresShown && m.reason.startsWith('failed: ') ? 'failed (above)' : m.reason}`));
  return out.join('\n') + '\n';
}

function pAdjustText(c: SweepComparison): string {
  return c.p_adjust === 'holm' ? ", Holm-adjusted over each suite's comparisons with the baseline" : ', each comparison at α (no multiple-comparison correction)';
}
