import { hasStages } from '../stages.js';
import type { BenchReport } from '../../core/aggregate.js';
import { esc, fmtJoules, fmtMs, fmtPct, fmtUsd, unscoredOf } from '../format.js';
import { INFER_LEGEND } from '../infer-view.js';
import { suiteEnergyText } from '../suite-energy.js';
import { readPageAsset } from './assets.js';
import { mtBenchSection } from './mt-bench-section.js';
import { rateSection } from './rate-section.js';
import { energySection } from './energy-section.js';

/** The page script with the MT-Bench, rate and power charts added before the page marks itself ready (inside its scope). */
const READY = "  document.body.setAttribute('data-ready', '1');";
const CLIENT_SCRIPT = readPageAsset('client.js');
if (!CLIENT_SCRIPT.includes(READY)) throw new Error('html: the page script lost its ready marker');
const PAGE_SCRIPT = CLIENT_SCRIPT.replace(READY, readPageAsset('mt-bench.js') + readPageAsset('rate.js') + readPageAsset('power.js') + READY);
const CSS = readPageAsset('page.css');
import type { HtmlModel } from './model.js';
import { sweepSection } from './sweep-section.js';
import { passAtKSection } from './pass-at-k-section.js';
import { fmtInterval } from '../ci-text.js';
import { intervalLabel } from '../../stats/interval.js';
import type { CiFigure } from '../../stats/report-ci.js';

/** Makes text safe inside a <script> element: no `</script`, no `<!--`. */
function scriptSafe(s: string): string {
  return s.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/**
 * The report page: text as static HTML (it reads with scripts off), charts by inlined ECharts and page script. No network.
 * `echarts`: the bundle's source to inline, or the same-origin address `joulebench view` serves it at.
 */
export function renderHtmlPage(model: HtmlModel, echarts: string | { src: string }): string {
  const labels = [...model.runs.map((r) => r.label), ...model.code.map((c) => c.label), ...model.infer.map((f) => f.label)];
  const title = labels.length === 1 ? `joulebench · ${labels[0]!}` : `joulebench · ${labels.length} runs`;
  const anyCost = model.runs.some((r) => typeof r.report.total_usd === 'number' && r.report.total_usd > 0);
  const allZeroCost = !anyCost && model.runs.some((r) => r.report.total_usd === 0);
  const data = JSON.stringify(model).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src${typeof echarts === 'string' ? '' : " 'self'"} 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
  <h1>${esc(title)}</h1>
  <p class="sub">What it cost, in joules, dollars and milliseconds, to get a correct answer. Generated ${esc(model.generated_utc)} (UTC).
  Every energy figure carries its source label in brackets; <span class="warn">⚠</span> marks readings below the meter's floor (noise-dominated).</p>
</header>
<main>
${model.runs.length > 0 ? `<section id="headline">
  <h2>Headline</h2>
  ${headlineTable(model)}
</section>` : ''}
${model.sweeps && model.sweeps.length > 0 ? sweepSection(model.sweeps) : ''}
${rateSection(model.rate_curves ?? [])}
${model.frontier.arms.length > 0 ? `<section id="frontier">
  <h2>Accuracy against joules per correct answer</h2>
  <p class="sub">Each point is an arm (a suite run, or a coding-agent solver, whose accuracy is its resolution %). Blue points lie on the Pareto frontier (no other arm is both at least as accurate and at least as cheap, and better in one); grey points are dominated. Measured and modelled energy are never drawn on one axis.</p>
  ${frontierCharts(model)}
  <p class="note" id="frontier-note"></p>
  ${notPlacedNote(model)}
</section>` : ''}
${mtBenchSection(model)}
${model.code.length > 0 ? codeSection(model) : ''}
${model.infer.length > 0 ? inferSection(model) : ''}
${energySection(model.energy)}
${model.runs.length > 0 ? `${model.runs.some((r) => hasStages(r.report)) ? `<section id="stages" class="pair">
  <div><h2>Stage distribution</h2><div class="chart" id="chart-stages" data-chart="stages"></div></div>
  <div><h2>Energy per stage</h2><div class="chart" id="chart-stage-energy" data-chart="stage-energy"></div></div>
</section>` : ''}
<section id="latency" class="pair">
  <div><h2>Latency${model.runs.some((r) => r.report.ttft_p50_ms != null) ? ' and TTFT' : ''}</h2><div class="chart" id="chart-latency" data-chart="latency"></div></div>
  <div><h2>Cost</h2>${anyCost ? '<div class="chart" id="chart-cost" data-chart="cost"></div>' : (allZeroCost ? '<p class="note empty">No chart: every run that reported a cost reported $0.00 (a known zero: nothing was billed); the figures are in the headline table.</p>' : '<p class="note empty">No run reported a cost (no usage or no price): cost is n/a, not $0.</p>')}</div>
</section>
<section id="cases">
  <h2>Cases</h2>
  <div class="controls">
    <input id="case-search" type="search" placeholder="search id, prompt, answer, dataset, stage…" aria-label="search cases">
    <select id="case-filter" aria-label="filter by outcome">
      <option value="all">all outcomes</option><option value="correct">correct</option><option value="incorrect">incorrect</option>
      <option value="unscored">unscored</option><option value="error">errors</option><option value="below-floor">below meter floor</option>
    </select>
    <select id="case-run" aria-label="filter by run"><option value="all">all runs</option></select>
    <span id="case-count" class="sub"></span>
  </div>
  ${model.runs.every((r) => !r.has_cases) ? '<p class="note empty">No per-case results were found next to these reports (pass the .results.jsonl file to see cases).</p>' : ''}
  ${promptNote(model)}
  <div class="scroll"><table class="cases">
    <thead><tr>${model.runs.length > 1 ? '<th id="case-run-head">run</th>' : ''}<th>case</th><th>dataset</th><th>pass</th><th>stage</th><th>outcome</th><th>energy</th><th>latency</th><th>TTFT</th><th>cost</th><th>expected</th><th>answer</th></tr></thead>
    <tbody id="case-rows"></tbody>
  </table></div>
</section>` : ''}
<section id="receipt">
  <h2>Receipt</h2>
  ${model.runs.map(receiptBlock).join('\n')}
  ${model.code.map((c) => otherReceipt(c.label, c.origin, c.receipt, [['suite', `${c.suite.name} (${c.suite.tasks} tasks)`], ['suite digest', c.suite.digest || 'n/a'], ['meter', c.meter], ['sandbox', c.sandbox], ['rollouts', String(c.rollouts)]])).join('\n')}
  ${model.infer.map((f) => otherReceipt(f.label, f.origin, f.receipt, [['prompt', `sha256:${f.prompt_sha256}`], ['target', f.target], ['started (UTC)', f.started_utc], ['finished (UTC)', f.finished_utc]])).join('\n')}
</section>
</main>
<script type="application/json" id="jb-data">${data}</script>
${typeof echarts === 'string' ? `<script>${scriptSafe(echarts)}</script>` : `<script src="${esc(echarts.src)}"></script>`}
<script>${scriptSafe(PAGE_SCRIPT)}</script>
</body>
</html>
`;
}

/** Where each run's prompts come from, or why they are not shown: said once above the table. */
function promptNote(model: HtmlModel): string {
  const lines = model.runs.flatMap((r) => {
    const p = r.prompts;
    if (!p) return [];
    const who = model.runs.length > 1 ? `${r.label}: ` : '';
    if (p.missing) return [`<li class="warn" data-prompts="missing">${esc(who)}prompts not shown: ${esc(p.missing)}</li>`];
    const left = p.omitted > 0 ? `; ${p.omitted} prompt${p.omitted === 1 ? '' : 's'} left out to keep this page small (read them in the suite)` : '';
    return [`<li data-prompts="shown">${esc(who)}prompts read from ${esc(p.source ?? '')}, whose digest still equals the run's${esc(left)}</li>`];
  });
  return lines.length ? `<ul class="note prompts">${lines.join('')}</ul>` : '';
}

function energyCell(j: number | null, r: BenchReport): string {
  const floor = r.below_floor_count > 0 ? ` <span class="warn" title="readings below the meter's floor">⚠ ${r.below_floor_count} below floor</span>` : '';
  return `${esc(fmtJoules(j))} <span class="src">[${esc(r.energy_source)}]</span>${floor}`;
}

/** Gross (with its source) and net whole-suite energy, idle watts, and how many cases have no energy. */
function suiteEnergyCell(r: BenchReport): string {
  const t = suiteEnergyText(r);
  const m = /^(.*) \[([^\]]+)\]$/.exec(t.gross);
  const gross = m ? `${esc(m[1]!)} <span class="src">[${esc(m[2]!)}]</span>` : esc(t.gross);
  return `${gross}${r.suite_below_floor ? ' <span class="warn" title="the whole-suite window was shorter than the meter floor">⚠ below floor</span>' : ''}
    <div class="sub">${esc(t.net)} · ${esc(t.net_per_correct)}</div><div class="sub">${esc(t.idle)}</div>${t.unknown ? `<div class="warn unknown">${esc(t.unknown)}</div>` : ''}`;
}

/** Why J/correct is n/a: said beside it, never left as a bare blank. */
function whyNoJPerCorrect(r: BenchReport): string {
  if ((r.energy_unknown_count ?? 0) > 0) return `energy unknown for ${r.energy_unknown_count} case${r.energy_unknown_count === 1 ? '' : 's'}`;
  if (r.correct_count === 0) return 'nothing correct';
  return 'energy unknown';
}

/** A figure's 95 % interval under it (`ci` in the report), or why there is none; nothing for reports without `ci`. */
function ciCell(r: BenchReport, f: CiFigure, prefix = ''): string {
  const ci = (r as Partial<BenchReport>).ci;
  if (!ci) return '';
  const i = ci[f];
  const pct = i ? intervalLabel(i) : `${Math.round(ci.level * 100)} %`;
  if (i?.method === 'degenerate') return `<div class="sub ci" data-ci="${f}" title="identical values: no interval to state">${esc(prefix)}${esc(fmtInterval(f, i))}</div>`;
  if (!i) return `<div class="sub ci" data-ci="${f}" title="${esc(ci.reasons[f] ?? '')}">${esc(prefix)}${pct}: n/a</div>`;
  return `<div class="sub ci" data-ci="${f}" title="${esc(i.method)}">${esc(prefix)}${pct} ${esc(fmtInterval(f, i))}</div>`;
}

function headlineTable(model: HtmlModel): string {
  const optimal = new Set(model.frontier.frontiers.energy.frontier);
  const rows = model.runs.map(({ label, report: r }) => {
    const ttft = r.ttft_p50_ms != null ? `${r.ttft_p50_ms} / ${r.ttft_p95_ms} ms` : '—';
    const unscored = unscoredOf(r) ?? 0;
    return `<tr>
      <td>${esc(label)}${optimal.has(label) ? ' <span class="badge" title="on the accuracy vs J/correct frontier">frontier</span>' : ''}<div class="sub">${esc(r.suite?.name ?? '?')} · ${esc(r.target ?? '?')}</div></td>
      <td class="num big">${esc(fmtPct(r.accuracy_pct))}<div class="sub">${r.correct_count ?? '?'}/${r.scored_count ?? '?'} scored correct${unscored > 0 ? `, <span class="warn">${unscored} unscored</span>` : ''}</div>${ciCell(r, 'accuracy_pct')}</td>
      <td class="num big">${energyCell(r.joules_per_correct, r)}${r.joules_per_correct === null ? `<div class="sub">${esc(whyNoJPerCorrect(r))}</div>` : ''}${ciCell(r, 'joules_per_correct')}</td>
      <td class="num">${energyCell(r.total_joules, r)}</td>
      <td class="num suite-energy">${suiteEnergyCell(r)}</td>
      <td class="num">${esc(fmtUsd(r.usd_per_correct ?? null))}<div class="sub">total ${esc(fmtUsd(r.total_usd ?? null))}</div>${ciCell(r, 'usd_per_correct')}</td>
      <td class="num">${esc(`${fmtMs(r.latency_p50_ms)} / ${fmtMs(r.latency_p95_ms)} / ${fmtMs(r.latency_p99_ms)}`)}${ciCell(r, 'latency_p95_ms', 'p95 ')}</td>
      <td class="num">${esc(ttft)}</td>
      <td class="num">${r.case_count}${r.error_count ? ` <span class="err">${r.error_count} errors</span>` : ''}</td>
    </tr>`;
  });
  return `<div class="scroll"><table class="headline"><thead><tr><th>run</th><th>accuracy</th><th>J / correct</th><th>total energy</th><th>whole-suite energy</th><th>$ / correct</th><th>latency p50 / p95 / p99</th><th>TTFT p50 / p95</th><th>cases</th></tr></thead>
  <tbody>${rows.join('')}</tbody></table></div>`;
}

/** Energy sources that are not measurements: a cost model or a coefficient. */
const MODELLED = new Set(['model', 'model:api', 'estimate']);

/** The frontier chart(s), measured and modelled energy on separate axes; fewer than two placed arms get a note instead. */
function frontierCharts(model: HtmlModel): string {
  const excluded = new Set(model.frontier.frontiers.energy.verdicts.filter((v) => v.excluded).map((v) => v.id));
  const placed = model.frontier.arms.filter((a) => a.accuracy_pct !== null && a.joules_per_correct !== null && !excluded.has(a.id));
  const groups: { kind: 'measured' | 'modelled'; title: string; arms: typeof placed }[] = [
    { kind: 'measured' as const, title: 'Measured energy', arms: placed.filter((a) => !MODELLED.has(a.energy_source.replace(/ net$/, ''))) },
    { kind: 'modelled' as const, title: 'Modelled or estimated energy (not a measurement)', arms: placed.filter((a) => MODELLED.has(a.energy_source.replace(/ net$/, ''))) },
  ].filter((g) => g.arms.length > 0);
  if (groups.length === 0) {
    const why = [...new Set(model.frontier.arms.map((a) => (a.accuracy_pct === null ? 'no accuracy' : 'J / correct unknown (n/a)')))].join('; ');
    const reasons = [...new Set(model.frontier.frontiers.energy.verdicts.map((v) => v.excluded).filter((x): x is string => x !== null))];
    return `<p class="note empty" id="frontier-missing">No chart: no two arms can be placed (${esc(reasons.length ? reasons.join('; ') : why)}).</p>`;
  }
  const both = groups.length > 1;
  return groups
    .map((g) => {
      const heading = both ? `<h3>${esc(g.title)}</h3>` : '';
      if (g.arms.length < 2) {
        return `${heading}<p class="note empty" data-missing-chart="${g.kind}">No chart for ${esc(g.kind)} energy: only one arm (${esc(g.arms[0]!.id)}) has figures, so there is nothing to trade off against; its numbers are in the tables.</p>`;
      }
      return `${heading}<div class="chart" id="chart-frontier${g.kind === 'modelled' && both ? '-modelled' : ''}" data-chart="frontier" data-energy="${g.kind}"></div>`;
    })
    .join('\n');
}

function notPlacedNote(model: HtmlModel): string {
  const np = model.frontier.not_placed;
  if (np.length === 0) return '';
  return `<p class="note" id="not-placed">Not on this chart: ${esc(np.map((a) => a.id).join(', '))}. ${esc([...new Set(np.map((a) => a.reason))].join('; '))}.</p>`;
}

function codeSection(model: HtmlModel): string {
  const eFront = new Set(model.frontier.frontiers.energy.frontier);
  const $Front = new Set(model.frontier.frontiers.cost.frontier);
  const files = model.code.map((c) => {
    const rows = c.solvers.map((s) => {
      const floor = s.below_floor_count > 0 ? ` <span class="warn" title="solver windows below the meter floor: noise-dominated">⚠ ${s.below_floor_count} below floor</span>` : '';
      const src = `<span class="src">[${esc(s.energy_source)}${s.energy_basis === 'net' ? ' net of idle' : ''}]</span>`;
      const marks = [eFront.has(s.arm) ? 'J' : '', $Front.has(s.arm) ? '$' : ''].filter(Boolean);
      const why = c.invalid_reasons[s.solver];
      return `<tr>
        <td>${esc(s.solver)}${marks.length ? ` <span class="badge" title="on the accuracy (resolution) frontier for ${marks.join(' and ')}">frontier ${marks.join(' ')}</span>` : ''}<div class="sub">${esc(s.arm)}</div></td>
        <td class="num big">${esc(fmtPct(s.resolution_pct))}<div class="sub">${s.resolved_count}/${s.valid_task_count} tasks resolved</div></td>
        <td class="num big">${esc(fmtJoules(s.joules_per_resolved))} ${src}${floor}${s.joules_per_resolved === null ? `<div class="sub">${esc(s.energy_missing_count > 0 ? `energy unknown for ${s.energy_missing_count} datapoint(s)` : s.resolved_count === 0 ? 'nothing resolved' : 'n/a')}</div>` : ''}</td>
        <td class="num">${esc(fmtJoules(s.total_joules))} ${src}</td>
        <td class="num">${esc(fmtUsd(s.usd_per_resolved))}<div class="sub">total ${esc(fmtUsd(s.total_usd))}${s.usd_missing_count > 0 ? `; ${s.usd_missing_count} without a cost` : ''}</div></td>
        <td class="num">${esc(fmtMs(s.median_wall_ms === null ? null : Math.round(s.median_wall_ms)))} / ${esc(fmtMs(s.wall_p95_ms === null ? null : Math.round(s.wall_p95_ms)))}</td>
        <td class="num">${s.invalid_count}${why ? `<div class="sub">${esc(why.join('; '))}</div>` : ''}</td>
        <td class="num">${s.escape_count > 0 ? `<span class="err">${s.escape_count} escaped</span>` : '0'}${s.timeout_count > 0 ? ` <span class="warn">${s.timeout_count} timed out</span>` : ''}</td>
      </tr>`;
    });
    return `<h3>${esc(c.label)} <span class="sub">suite ${esc(c.suite.name)} · ${c.suite.tasks} tasks · best-of-${c.rollouts} · meter ${esc(c.meter)} · sandbox ${esc(c.sandbox)}</span></h3>
    <div class="scroll"><table class="code"><thead><tr><th>solver (arm)</th><th>resolution (accuracy)</th><th>J / resolved (J / correct)</th><th>total energy</th><th>$ / resolved</th><th>wall median / p95</th><th>invalid</th><th>escapes</th></tr></thead>
    <tbody>${rows.join('')}</tbody></table></div>
    ${passAtKSection(c.solvers, c.energy_budget_j)}
    ${gridTable(c)}`;
  });
  return `<section id="code">
  <h2>Coding agents</h2>
  <p class="sub">Each solver is an arm: accuracy = tasks resolved ÷ valid tasks (best-of-N over rollouts), J/correct = energy over every rollout ÷ tasks resolved, $/correct = dollars ÷ tasks resolved. n/a means unknown or nothing resolved, never 0.</p>
  ${files.join('\n')}
</section>`;
}

/** Task × solver: resolved / not resolved / invalid, best-of-N over the rollouts. */
function gridTable(c: HtmlModel['code'][number]): string {
  const g = c.grid;
  if (g.tasks.length === 0 || g.solvers.length === 0) return '';
  const mark = { resolved: '✓ resolved', not: '✗ not resolved', invalid: '— invalid' } as const;
  // Each task opens its prompt (task.toml, read back while the suite's digest matches); else a note says why not.
  const prompt = (t: string): string => {
    const text = c.prompts.by_task[t];
    return text === undefined ? esc(t) : `<details class="task-prompt" id="task-${esc(encodeURIComponent(`${c.label}/${t}`))}"><summary>${esc(t)}</summary><pre class="prompt">${esc(text)}</pre></details>`;
  };
  const note = c.prompts.missing
    ? `<p class="note warn" data-prompts="missing">Task prompts not shown: ${esc(c.prompts.missing)}</p>`
    : `<p class="note" data-prompts="shown">Each task opens its prompt, read from ${esc(c.prompts.source ?? '')}, whose digest still equals the run's.</p>`;
  const rows = g.tasks.map(
    (t) =>
      `<tr><td class="mono">${prompt(t)}</td>${g.solvers
        .map((s) => {
          const cell = g.cells[t]?.[s];
          if (!cell) return '<td>—</td>';
          const n = cell.rollouts > 1 ? ` <span class="sub">${cell.resolved}/${cell.rollouts}</span>` : '';
          return `<td class="grid ${cell.outcome}">${esc(mark[cell.outcome])}${n}</td>`;
        })
        .join('')}</tr>`,
  );
  return `${note}<div class="scroll"><table class="grid" data-grid="${esc(c.label)}"><thead><tr><th>task</th>${g.solvers.map((s) => `<th>${esc(s)}</th>`).join('')}</tr></thead>
    <tbody>${rows.join('')}</tbody></table></div>`;
}

function inferSection(model: HtmlModel): string {
  const n = (v: number | null | undefined, d = 2): string => (v === null || v === undefined ? 'n/a' : v.toFixed(d));
  const ms = (v: number | null | undefined): string => (v === null || v === undefined ? 'n/a' : `${v.toFixed(1)} ms`);
  const first = model.infer.flatMap((f) => f.arms).find((a) => a.first_token)?.first_token ?? null;
  const head = (k: 'cached_prefix_ms' | 'fresh_prompt_model_loaded_ms' | 'fully_cold_ms' | 'decode_tok_s', fallback: string): string =>
    `<th title="${esc(first?.[k].rule ?? '')}">${esc(first?.[k].label ?? fallback)}</th>`;
  const rows = model.infer.flatMap((f) =>
    f.arms.map((a) => {
      const status = a.contaminated ? '<span class="err">contaminated</span>' : esc(a.receipt);
      const ft = a.first_token;
      return `<tr class="infer-arm">
        <td>${esc(a.id)}<div class="sub">${a.scored_runs} scored · ${a.cold_runs} cold runs</div></td>
        <td class="num big">${esc(n(a.decode_tok_s_median))}</td>
        <td class="num">${a.decode_spread === null ? 'n/a' : esc(`${(a.decode_spread * 100).toFixed(2)} %`)}</td>
        <td class="num">${esc(n(a.prefill_tok_s_cold, 1))}</td>
        <td class="num">${esc(ms(ft?.cached_prefix_ms.value))}</td>
        <td class="num">${esc(ms(ft?.fresh_prompt_model_loaded_ms.value))}</td>
        <td class="num">${esc(ms(ft?.fully_cold_ms.value))}</td>
        <td class="num">${esc(n(ft?.decode_tok_s.value))}</td>
        <td class="num">${a.j_per_decoded_token === null ? 'n/a' : esc(a.j_per_decoded_token.toPrecision(3))} <span class="src">[${esc(a.energy_source)}]</span></td>
        <td>${status}${a.flags.length ? `<div class="sub">${esc(a.flags.join('; '))}</div>` : ''}</td>
      </tr>`;
    }),
  );
  return `<section id="infer">
  <h2>Local inference (infer)</h2>
  <p class="sub">An infer arm is one model at one thread count. It has no accuracy (a fixed prompt is timed, nothing is graded), so it is not on the accuracy frontiers above. Contaminated arms (GPU snapshot changed) are named with no figures.</p>
  <div class="chart" id="chart-infer" data-chart="infer"></div>
  <div class="scroll"><table class="infer"><thead><tr><th>arm</th><th>decode tok/s (median)</th><th>spread</th><th>cold prefill tok/s</th>
  ${head('cached_prefix_ms', 'cached-prefix first token')}${head('fresh_prompt_model_loaded_ms', 'fresh prompt, model loaded')}${head('fully_cold_ms', 'fully cold first token')}${head('decode_tok_s', 'decode throughput, tok/s')}
  <th>J / decoded token</th><th>receipt</th></tr></thead>
  <tbody>${rows.join('')}</tbody></table></div>
  <p class="note">${INFER_LEGEND.map(esc).join('<br>')}</p>
</section>`;
}

/** A receipt as details: the facts given, the receipt's times, versions and host, then the receipt whole. */
function receiptDetails(head: string, receipt: Record<string, unknown> | null, facts: [string, string][], cores = false): string {
  const rc = receipt ?? {};
  const host = (rc.host ?? {}) as Record<string, unknown>;
  const cpu = `${String(host.cpu_model ?? 'cpu n/a')}${cores ? ` × ${String(host.cores ?? '?')}` : ''}`;
  const all: [string, string][] = [
    ...facts,
    ['started (UTC)', String(rc.started_utc ?? 'n/a')],
    ['finished (UTC)', String(rc.finished_utc ?? 'n/a')],
    ['joulebench', String(rc.joulebench_version ?? 'n/a')],
    ['node', String(rc.node_version ?? 'n/a')],
    ['host', `${String(host.hostname ?? 'n/a')} · ${String(host.platform ?? '')} ${String(host.arch ?? '')} · ${cpu}`],
  ];
  const dedup = all.filter(([k], i) => all.findIndex(([first]) => first === k) === i);
  return `${head}
  <dl>${dedup.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl>
  ${receipt ? `<pre>${esc(JSON.stringify(receipt, null, 2))}</pre>` : ''}
  </details>`;
}

function otherReceipt(label: string, origin: string, receipt: Record<string, unknown> | null, facts: [string, string][]): string {
  return receiptDetails(`<details><summary>${esc(label)}</summary>`, receipt, [['source', origin], ...facts]);
}

function receiptBlock(run: HtmlModel['runs'][number]): string {
  const r = run.report;
  const rc = run.receipt ?? {};
  const note = run.receipt ? '' : ' — no receipt found; report facts only';
  const head = `<details ${run.receipt ? '' : 'class="noreceipt"'}><summary>${esc(run.label)}${note}</summary>`;
  return receiptDetails(head, run.receipt, [
    ['source', run.origin],
    ['suite', `${r.suite?.name ?? '?'} ${r.suite?.version ?? ''}`],
    ['suite digest', r.suite?.digest ?? 'n/a'],
    ['config digest', typeof rc.config_digest === 'string' ? rc.config_digest : 'n/a'],
    ['target', r.target ?? '?'],
    ['meter', `${r.meter ?? '?'} (energy source ${r.energy_source})`],
    ['passes', `${r.warmup} warmup (not scored), ${r.repeats} scored`],
  ], true);
}
