import type { SolverSummary } from '../../code/aggregate.js';
import { esc, fmtJoules, fmtPct, fmtUsd } from '../format.js';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563', '#ca8a04'];

/** pass@k (solid) and pass^k (dashed) per solver as inline SVG, with their table; empty without two or more rollouts. */
export function passAtKSection(solvers: readonly SolverSummary[], budgetJ: number | null): string {
  const withCurve = solvers.filter((s) => s.pass_at_k.length >= 2);
  const failures = solvers.filter((s) => s.unresolved_task_count > 0);
  const parts: string[] = [];
  if (withCurve.length > 0) {
    const K = Math.max(...withCurve.map((s) => s.pass_at_k.length));
    const W = 560;
    const H = 260;
    const L = 44;
    const R = 12;
    const T = 12;
    const B = 34;
    const x = (k: number) => L + ((k - 1) / Math.max(1, K - 1)) * (W - L - R);
    const y = (pct: number) => T + (1 - pct / 100) * (H - T - B);
    const grid = [0, 25, 50, 75, 100]
      .map((p) => `<line x1="${L}" x2="${W - R}" y1="${y(p)}" y2="${y(p)}" stroke="#e5e7eb"/><text x="${L - 6}" y="${y(p) + 4}" text-anchor="end" font-size="11">${p}%</text>`)
      .join('');
    const ticks = Array.from({ length: K }, (_, i) => i + 1)
      .map((k) => `<text x="${x(k)}" y="${H - B + 16}" text-anchor="middle" font-size="11">${k}</text>`)
      .join('');
    const lines = withCurve
      .map((s, i) => {
        const c = COLORS[i % COLORS.length]!;
        const at = s.pass_at_k.map((p) => `${x(p.k).toFixed(1)},${y(p.pass_at_k_pct).toFixed(1)}`).join(' ');
        const hat = s.pass_at_k.map((p) => `${x(p.k).toFixed(1)},${y(p.pass_hat_k_pct).toFixed(1)}`).join(' ');
        return `<g data-solver="${esc(s.solver)}"><polyline fill="none" stroke="${c}" stroke-width="2" points="${at}"><title>${esc(s.solver)} pass@k</title></polyline><polyline fill="none" stroke="${c}" stroke-width="2" stroke-dasharray="5 4" points="${hat}"><title>${esc(s.solver)} pass^k</title></polyline></g>`;
      })
      .join('');
    const legend = withCurve.map((s, i) => `<span style="color:${COLORS[i % COLORS.length]}">■</span> ${esc(s.solver)}`).join(' &nbsp; ');
    parts.push(`<figure class="pass-at-k"><svg viewBox="0 0 ${W} ${H}" width="100%" style="max-width:${W}px" role="img" aria-label="pass@k and pass^k against k">${grid}${ticks}<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle" font-size="11">k (rollouts)</text>${lines}</svg>
    <figcaption class="sub">${legend} — solid: pass@k (any of k rollouts resolves; unbiased estimator, Chen et al. 2021); dashed: pass^k (all k resolve).</figcaption></figure>`);
    const rows = withCurve.flatMap((s) =>
      s.pass_at_k.map(
        (p) => `<tr><td>${p.k === 1 ? esc(s.solver) : ''}</td><td class="num">${p.k}</td><td class="num">${esc(fmtPct(p.pass_at_k_pct))}</td><td class="num">${esc(fmtPct(p.pass_hat_k_pct))}</td><td class="num">${esc(fmtJoules(p.joules_per_resolved))}</td><td class="num">${esc(fmtUsd(p.usd_per_resolved))}</td><td class="num">${esc(fmtJoules(p.joules_per_resolved_all_k))}</td></tr>`,
      ),
    );
    parts.push(`<table class="code pass-at-k"><thead><tr><th>solver</th><th>k</th><th>pass@k</th><th>pass^k</th><th>J / resolved at k</th><th>$ / resolved at k</th><th>J / resolved (all k)</th></tr></thead><tbody>${rows.join('')}</tbody></table>
    <p class="sub">J / resolved at k = expected energy of k rollouts on every task ÷ expected tasks resolved (Σ pass@k); at k = N it is the best-of-N figure above. n/a: unknown or nothing resolved.</p>`);
  }
  if (failures.length > 0) {
    const items = failures.map((s) => `${esc(s.solver)}: ${s.unresolved_task_count} task(s) never resolved took ${esc(fmtJoules(s.unresolved_joules))}, ${esc(fmtUsd(s.unresolved_usd))}`);
    parts.push(`<p class="sub expensive-failures">Expensive failures (energy and dollars on tasks no rollout resolved, included in the totals): ${items.join('; ')}.</p>`);
  }
  if (budgetJ !== null) {
    const items = solvers.map((s) => `${esc(s.solver)} ${esc(fmtPct(s.resolution_under_budget_pct))}`);
    parts.push(`<p class="sub under-budget">Resolution under ${esc(fmtJoules(budgetJ))} per attempt (area under resolved vs joules up to the budget, ÷ the budget): ${items.join('; ')}.</p>`);
  }
  return parts.join('\n');
}
