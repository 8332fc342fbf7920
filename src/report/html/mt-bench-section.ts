import { fmtScore, fmtShare as share, fmtTurn, hasMtBench, promptsText } from '../mt-bench-table.js';
import { esc, fmtJoules, fmtUsd } from '../format.js';
import type { HtmlModel } from './model.js';

/** Judged runs' MT-Bench section: category score bars per arm and a table with J per point and the judge's own figures apart. */
export function mtBenchSection(model: HtmlModel): string {
  const judged = model.runs.filter((r) => hasMtBench(r.report));
  if (judged.length === 0) return '';
  const rows = judged.flatMap(({ label, report }) => {
    if (!hasMtBench(report)) return [];
    const j = report.judge;
    const head = `<tr class="arm"><td>${esc(label)}<div class="sub">judge ${esc(j.model)} · ${esc(j.mode)} · prompts ${esc(j.prompt_hash.slice(0, 19))}… · ${esc(promptsText(j))}</div></td>
      <td>all</td><td class="num big">${fmtScore(report.mt_bench_score)}<div class="sub">${report.mt_bench_judged_count} judged${report.mt_bench_unscored_count ? `, <span class="warn">${report.mt_bench_unscored_count} unscored</span>` : ''}</div>${
        report.mt_bench_turns?.average.count ? `<div class="sub">turn 1 ${esc(fmtTurn(report.mt_bench_turns.turn_1))} · turn 2 ${esc(fmtTurn(report.mt_bench_turns.turn_2))} · average ${esc(fmtTurn(report.mt_bench_turns.average))}</div>` : ''
      }</td>
      <td class="num">${esc(fmtJoules(report.joules_per_mt_bench_point))}</td>
      <td class="num">${esc(fmtJoules(report.judge_joules))} <span class="src">[${esc(report.judge_energy_source)}]</span><div class="sub">${esc(share(report.judge_share_joules))} of all energy</div></td>
      <td class="num">${esc(fmtUsd(report.judge_usd))}<div class="sub">${esc(share(report.judge_share_usd))} of all dollars</div></td></tr>`;
    const cats = Object.entries(report.mt_bench_by_category).map(
      ([cat, c]) => `<tr><td></td><td>${esc(cat)}</td><td class="num">${fmtScore(c.mt_bench_score)}</td><td class="num">${esc(fmtJoules(c.joules_per_mt_bench_point))}</td><td></td><td></td></tr>`,
    );
    return [head, ...cats];
  });
  return `<section id="mt-bench">
  <h2>MT-Bench score per category</h2>
  <p class="sub">Mean judge rating (1–10) per category for each arm; joules per MT-Bench point = energy ÷ Σ score. The judge's own energy and dollars are measured and shown apart, never added to the arm's.</p>
  <div class="chart" id="chart-mt-bench" data-chart="mt-bench"></div>
  <table class="headline mt-bench"><thead><tr><th>arm</th><th>category</th><th>MT-Bench score</th><th>J / point</th><th>judge energy</th><th>judge cost</th></tr></thead>
  <tbody>${rows.join('')}</tbody></table>
</section>`;
}
