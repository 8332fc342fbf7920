import type { Interval } from '../../stats/interval.js';
import type { SweepComparison } from '../../sweep/comparison.js';
import { esc, fmtJoules, fmtMs, fmtP, fmtPct, fmtSigned, fmtUsd } from '../format.js';

const withCi = (v: number | null, i: Interval | null, f: (x: number) => string): string =>
  v === null ? 'n/a' : `${esc(f(v))}${i ? (i.method === 'degenerate' ? `<div class="sub ci">degenerate (identical values)</div>` : `<div class="sub ci">95 % [${esc(f(i.low))}, ${esc(f(i.high))}]</div>`) : ''}`;

/** The sweep's comparison as static HTML: per suite, arms with intervals and frontier marks, then the paired verdicts. */
export function sweepSection(sweeps: readonly SweepComparison[]): string {
  return sweeps.flatMap((c) => c.suites.map((s) => suiteSection(c, s))).join('\n');
}

function suiteSection(c: SweepComparison, s: SweepComparison['suites'][number]): string {
  const mark = (arm: string, axis: 'energy' | 'cost') =>
    s.frontiers[axis].frontier.includes(arm)
      ? '<span class="badge">frontier</span>'
      : s.frontiers[axis].not_distinguishable.includes(arm)
        ? '<span class="badge nd" title="dominated, but its intervals overlap a frontier arm on both axes">not distinguishable</span>'
        : '';
  const rows = s.arms
    .map(
      (a) => `<tr data-arm="${esc(a.arm)}"><td>${esc(a.arm)}${a.arm === s.baseline ? ' <span class="sub">(baseline)</span>' : ''}</td>
        <td class="num">${withCi(a.accuracy_pct, a.accuracy_ci, (x) => fmtPct(x))}</td>
        <td class="num">${withCi(a.joules_per_correct, a.joules_per_correct_ci, fmtJoules)} <span class="src">[${esc(a.energy_source)}]</span></td>
        <td class="num">${withCi(a.usd_per_correct, a.usd_per_correct_ci, fmtUsd)}</td>
        <td class="num">${withCi(a.latency_p95_ms, a.latency_p95_ci, fmtMs)}</td>
        <td>${mark(a.arm, 'energy')}</td><td>${mark(a.arm, 'cost')}</td></tr>`,
    )
    .join('');
  const withheld = (['energy', 'cost'] as const)
    .flatMap((axis) => [
      ...(s.frontiers[axis].withheld ? [`${axis} frontier withheld: ${s.frontiers[axis].withheld}`] : []),
      ...s.frontiers[axis].not_placed.map((n) => `${axis} frontier: ${n.arm} not placed (${n.reason})`),
    ])
    .map((t) => `<p class="note">${esc(t)}</p>`)
    .join('');
  const vs = s.vs_baseline.length
    ? `<h3>Against the baseline ${esc(s.baseline ?? '')} (paired, α = ${c.alpha}${c.p_adjust === 'holm' ? ', Holm-adjusted' : ', no multiple-comparison correction'})</h3>
      ${c.p_adjust === 'holm' ? `<p class="sub">McNemar p-values Holm-adjusted over this suite's comparisons with the baseline; J/correct, $/correct and p95 verdicts from intervals at α/m (Bonferroni), m the arms paired.</p>` : ''}
      <table class="verdicts"><thead><tr><th>arm</th><th>accuracy Δ</th><th>McNemar p${c.p_adjust === 'holm' ? ' (Holm)' : ''}</th><th>verdict</th><th>J/correct Δ</th><th>verdict</th><th>$/correct Δ</th><th>verdict</th><th>p95 Δ</th><th>verdict</th></tr></thead><tbody>${s.vs_baseline
      .map(
        (v) => `<tr data-arm="${esc(v.arm)}"><td>${esc(v.arm)}</td><td class="num">${esc(fmtSigned(v.accuracy_pp_delta, ' pp'))}</td><td class="num">${esc(fmtP(v.accuracy_p_adjusted ?? v.accuracy_p_value))}</td><td class="verdict">${esc(v.accuracy_verdict)}</td>
        <td class="num">${esc(fmtSigned(v.joules_per_correct_pct, ' %'))}</td><td class="verdict">${esc(v.joules_per_correct_verdict)}</td>
        <td class="num" data-k="usd_per_correct_pct">${esc(fmtSigned(v.usd_per_correct_pct, ' %'))}</td><td class="verdict">${esc(v.usd_per_correct_verdict)}</td>
        <td class="num">${esc(fmtSigned(v.latency_p95_pct, ' %'))}</td><td class="verdict">${esc(v.latency_p95_verdict)}</td></tr>`,
      )
      .join('')}</tbody></table>`
    : '';
  return `<section class="sweep" id="sweep-${esc(c.sweep.id)}-${esc(s.suite)}">
  <h2>Sweep ${esc(c.sweep.name)} · suite ${esc(s.suite)}</h2>
  <p class="sub">${esc(c.sweep.id)} · intervals are 95 % (Wilson for accuracy, bootstrap over cases for the rest, or large-sample intervals above the bootstrap's case limit); the chart below draws them as error bars.</p>
  <table class="sweep-arms"><thead><tr><th>arm</th><th>accuracy</th><th>J / correct</th><th>$ / correct</th><th>p95</th><th>J frontier</th><th>$ frontier</th></tr></thead><tbody>${rows}</tbody></table>
  ${withheld}${vs}
</section>`;
}
