import type { CaseResult, ChatMessage, ResultsHeader } from '../core/types.js';
import { compare } from '../core/compare.js';
import { withPairedStats } from '../core/paired-compare.js';
import type { Datapoint } from '../code/oracle.js';
import { casePrompt, resolvePrompts } from '../report/case-prompts.js';
import { comparisonRows, pairedHow } from '../report/comparison-rows.js';
import { esc, fmtJoules, fmtMs, fmtPct, fmtUsd } from '../report/format.js';
import { buildHtmlReport } from '../report/html/index.js';
import { loadInputs, loadRuns } from '../report/load-inputs.js';
import { HTML_CASE_ROWS } from '../report/page-limits.js';
import { streamResultsFile } from '../runner/results-stream.js';
import type { ViewRun, ViewSources } from './sources.js';

const PAGE_SIZE = 50;
const NAV = '<nav class="jbv"><a href="/">runs</a> <a href="/trends">trends</a></nav>';

function layout(title: string, body: string, script = false): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>${esc(title)}</title>
<link rel="stylesheet" href="/assets/page.css"><link rel="stylesheet" href="/assets/view.css">
</head><body>${NAV}<header><h1>${esc(title)}</h1></header><main>${body}</main>
${script ? '<script src="/assets/echarts.min.js"></script><script src="/assets/view.js"></script>' : ''}</body></html>`;
}

export const notFound = (why = 'not found: the viewer serves the history and the files named on its command line only'): string => layout('joulebench view', `<p class="note warn">${esc(why)}</p>`);

const num = (v: number | null, f: (x: number) => string): string => (v === null ? '<span class="sub">n/a</span>' : esc(f(v)));
const opt = (v: string, cur: string | null, label = v): string => `<option value="${esc(v)}"${v === cur ? ' selected' : ''}>${esc(label)}</option>`;

/** Sort keys of the runs list: each a figure, nulls always last. */
const SORTS: Record<string, { label: string; of: (r: ViewRun) => number | string | null; desc: boolean }> = {
  date: { label: 'date', of: (r) => r.date, desc: true },
  accuracy: { label: 'accuracy', of: (r) => r.accuracy_pct, desc: true },
  jpc: { label: 'J / correct', of: (r) => r.joules_per_correct, desc: false },
  upc: { label: '$ / correct', of: (r) => r.usd_per_correct, desc: false },
  p95: { label: 'latency p95', of: (r) => r.latency_p95_ms, desc: false },
};

export function runsPage(s: ViewSources, q: URLSearchParams): string {
  const f = (k: string) => q.get(k)?.trim() || null;
  const [suite, target, model, sweep, from, to] = [f('suite'), f('target'), f('model'), f('sweep'), f('from'), f('to')];
  const sortKey = f('sort') ?? 'date';
  const sort = SORTS[sortKey] ?? SORTS.date!;
  const has = (v: string | null, want: string | null) => want === null || (v ?? '').toLowerCase().includes(want.toLowerCase());
  const runs = s.runs
    .filter((r) => (suite === null || r.suite === suite) && (sweep === null || r.sweep === sweep) && has(r.target, target) && has(r.model, model))
    .filter((r) => (from === null || (r.date ?? '') >= from) && (to === null || (r.date ?? '').slice(0, 10) <= to))
    .sort((a, b) => {
      const x = sort.of(a);
      const y = sort.of(b);
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
      return (x < y ? -1 : x > y ? 1 : 0) * (sort.desc ? -1 : 1);
    });
  const distinct = (k: 'suite' | 'sweep') => [...new Set(s.runs.map((r) => r[k]).filter((v): v is string => v !== null))].sort();
  const filters = `<form class="controls" method="get" action="/">
  <select name="suite" aria-label="suite"><option value="">all suites</option>${distinct('suite').map((v) => opt(v, suite)).join('')}</select>
  <input name="target" placeholder="target" value="${esc(target ?? '')}" aria-label="target">
  <input name="model" placeholder="model" value="${esc(model ?? '')}" aria-label="model">
  <select name="sweep" aria-label="sweep"><option value="">any sweep</option>${distinct('sweep').map((v) => opt(v, sweep)).join('')}</select>
  <input name="from" type="date" value="${esc(from ?? '')}" aria-label="from"><input name="to" type="date" value="${esc(to ?? '')}" aria-label="to">
  <select name="sort" aria-label="sort">${Object.entries(SORTS).map(([k, v]) => opt(k, sortKey, `sort: ${v.label}`)).join('')}</select>
  <button>filter</button></form>`;
  const rows = runs.map(
    (r) => `<tr data-key="${esc(r.key)}"><td><input type="checkbox" name="k" value="${esc(r.key)}" aria-label="select ${esc(r.key)}"></td>
    <td><a href="/run/${esc(r.key)}">${esc(r.key.startsWith('h') ? `#${r.key.slice(1)}` : r.origin.split('/').pop() ?? r.key)}</a>${r.kind === 'suite' && r.results_path ? ` <a class="sub" href="/cases/${esc(r.key)}">cases</a>` : r.kind === 'code' ? ` <a class="sub" href="/cases/${esc(r.key)}">datapoints</a>` : ''}</td>
    <td>${esc(r.kind)}</td><td>${esc((r.date ?? 'n/a').replace(/\.\d+Z$/, 'Z'))}</td><td>${esc(r.suite ?? '?')}</td><td>${esc(r.target ?? '?')}</td><td>${esc(r.model ?? '')}</td><td>${esc(r.sweep ?? '')}</td>
    <td class="num">${num(r.accuracy_pct, (v) => fmtPct(v))}</td><td class="num">${num(r.joules_per_correct, fmtJoules)} <span class="src">[${esc(r.energy_source ?? 'none')}]</span></td>
    <td class="num">${num(r.usd_per_correct, fmtUsd)}</td><td class="num">${num(r.latency_p95_ms, fmtMs)}</td></tr>`,
  );
  const groups = s.groups.length
    ? `<section><h2>Sweeps and load curves</h2><ul>${s.groups.map((g) => `<li><a href="/run/${esc(g.key)}">${esc(g.label)}</a> <span class="sub">${g.kind === 'sweep' ? 'sweep: table, frontiers, arms' : 'load: rate curves'} · ${g.runs.length} runs</span></li>`).join('')}</ul></section>`
    : '';
  const where = s.history ? `history ${s.history.path}` : 'no history';
  return layout(
    'joulebench · runs',
    `${groups}<section id="runs"><h2>Runs <span class="sub">${runs.length} of ${s.runs.length} · ${esc(where)}</span></h2>${filters}
  <form method="get" action="/report"><div class="controls"><button>open selected on one page</button> <button formaction="/compare">compare two selected</button></div>
  <div class="scroll"><table class="runs"><thead><tr><th></th><th>run</th><th>kind</th><th>UTC</th><th>suite</th><th>target</th><th>model</th><th>sweep</th><th>accuracy</th><th>J / correct</th><th>$ / correct</th><th>p95</th></tr></thead>
  <tbody>${rows.join('')}</tbody></table></div></form>${runs.length === 0 ? '<p class="note empty">No runs match.</p>' : ''}</section>`,
  );
}

/** The report pages load the ECharts bundle the server serves (cached by the browser) instead of inlining 1 MB each. */
const ECHARTS = { src: '/assets/echarts.min.js' };

/** The static report page of runs (or of a named sweep folder or rate sweep), rendered now, with the viewer's links on top. */
export async function reportPage(s: ViewSources, keys: readonly string[]): Promise<string | null> {
  const group = keys.length === 1 ? s.groups.find((g) => g.key === keys[0]) : undefined;
  let html: string;
  let runs: ViewRun[];
  if (group?.kind === 'sweep') {
    const { sweepInputs } = await import('../cli/commands/report.js');
    const sw = await sweepInputs([group.path], true);
    html = buildHtmlReport(sw.runs, new Date(), sw.comparisons, ECHARTS);
    runs = group.runs.map((k) => s.byKey.get(k)!);
  } else {
    runs = (group ? group.runs : keys).map((k) => s.byKey.get(k)).filter((r): r is ViewRun => r !== undefined);
    if (runs.length === 0 || (!group && runs.length !== keys.length)) return null;
    html = buildHtmlReport(loadInputs(runs.map((r) => r.spec), s.history, { cases: true, casesLimit: HTML_CASE_ROWS }), new Date(), [], ECHARTS);
  }
  const links = runs.filter((r) => r.results_path || r.kind === 'code').map((r) => `<a href="/cases/${esc(r.key)}">${r.kind === 'code' ? 'datapoints' : 'transcripts'} ${esc(r.key)}</a>`);
  const nav = `<link rel="icon" href="data:,"><style>nav.jbv{padding:.4rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;border-bottom:1px solid #ddd}</style>${NAV.replace('</nav>', ` ${links.join(' ')}</nav>`)}`;
  return html.replace('<body>', `<body>\n${nav}`);
}

type Outcome = 'all' | 'correct' | 'incorrect' | 'unscored' | 'error' | 'below-floor';
const OUTCOMES: Outcome[] = ['all', 'correct', 'incorrect', 'unscored', 'error', 'below-floor'];
const outcomeOf = (r: CaseResult): string => (r.error ? 'error' : r.passed === true ? 'correct' : r.passed === false ? 'incorrect' : 'unscored');
const matches = (r: CaseResult, o: Outcome): boolean => o === 'all' || (o === 'below-floor' ? r.below_floor : outcomeOf(r) === o);

const promptText = (p: string | ChatMessage[]): string =>
  typeof p === 'string' ? p : p.map((m) => `${m.role}: ${m.content}`).join('\n\n');

/** One run's cases (or a code run's datapoints) with search and an outcome filter, a page at a time. */
export function casesPage(s: ViewSources, key: string, q: URLSearchParams): string | null {
  const run = s.byKey.get(key);
  if (!run) return null;
  if (run.kind === 'code') return datapointsPage(s, run);
  if (!run.results_path) return layout(`joulebench · cases of ${key}`, '<p class="note empty">This run has no per-case results file recorded.</p>');
  const search = (q.get('q') ?? '').trim().toLowerCase();
  const outcome = (OUTCOMES as string[]).includes(q.get('outcome') ?? '') ? (q.get('outcome') as Outcome) : 'all';
  const page = Math.max(0, Number.parseInt(q.get('page') ?? '0', 10) || 0);
  let header: ResultsHeader | null = null;
  const shown: CaseResult[] = [];
  let matched = 0;
  streamResultsFile(run.results_path, {
    header: (h) => (header = h),
    case: (r) => {
      if (r.phase !== 'scored' || !matches(r, outcome)) return;
      if (search && ![r.case_id, r.dataset, r.response, r.expected, r.error?.message, r.prompt === undefined ? undefined : promptText(r.prompt)].some((t) => t?.toLowerCase().includes(search))) return;
      if (matched >= page * PAGE_SIZE && matched < (page + 1) * PAGE_SIZE) shown.push(r);
      matched++;
    },
    other: () => {},
  });
  const h = header as ResultsHeader | null;
  // The suite is read back only when some shown case kept no prompt and the run did not refuse to keep them.
  const lookup = h?.prompts === 'none' || shown.every((r) => r.prompt !== undefined) ? null : resolvePrompts(h, shown);
  const promptOf = (r: CaseResult): string => {
    const p = casePrompt(h, r, lookup);
    if (p.ok) return `<pre class="prompt">${esc(promptText(p.prompt))}</pre>`;
    return h?.prompts === 'none' ? '<p class="note">prompts not stored (--no-store-prompts)</p>' : `<p class="note warn">prompt not shown: ${esc(p.reason)}</p>`;
  };
  const text = (v: string | null | undefined) => (v === null || v === undefined ? '<span class="sub">none</span>' : `<pre>${esc(v)}</pre>`);
  const items = shown.map((r) => {
    const judge = r.meta?.judge as { mode?: string; ratings?: unknown[]; error?: string | null } | undefined;
    const facts: [string, string][] = [
      ['outcome', outcomeOf(r)],
      ['score', r.score === null ? 'n/a' : String(r.score)],
      ...(r.parsed !== undefined ? [['parsed', r.parsed ?? 'none'] as [string, string]] : []),
      ...(judge ? [['judge', `${judge.mode ?? '?'} · ratings ${JSON.stringify(judge.ratings ?? [])} · verdict ${outcomeOf(r)}${judge.error ? ` · error: ${judge.error}` : ''}`] as [string, string]] : []),
      ['energy', `${fmtJoules(r.joules)} [${r.energy_source}]${r.below_floor ? ' ⚠ below floor' : ''}${r.energy_invalid ? ` · invalid: ${r.energy_invalid}` : ''}`],
      ['latency', fmtMs(Number(r.latency_ms.toFixed(1)))],
      ['TTFT', r.ttft_ms === null ? 'n/a' : fmtMs(Number(r.ttft_ms.toFixed(1)))],
      ['tokens', `${r.prompt_tokens ?? 'n/a'} in · ${r.completion_tokens ?? 'n/a'} out`],
      ['cost', fmtUsd(r.cost_usd)],
      ['retries', `${r.attempts - 1} (${Math.round(r.retry_overhead_ms)} ms)`],
      ...(r.error ? [['error', `${r.error.code}: ${r.error.message}`] as [string, string]] : []),
    ];
    const answers = r.turns?.length ? r.turns.map((t, i) => `<h4>turn ${i + 1}</h4>${text(t.response)}`).join('') : text(r.response);
    return `<details class="case ${esc(outcomeOf(r))}" data-case="${esc(r.case_id)}"><summary><span class="mono">${esc(r.case_id)}</span> · ${esc(outcomeOf(r))}${r.pass > 0 ? ` · pass ${r.pass}` : ''} · ${esc(fmtJoules(r.joules))} · ${esc(fmtMs(Number(r.latency_ms.toFixed(1))))}</summary>
    <h4>prompt</h4>${promptOf(r)}<h4>answer</h4>${answers}<h4>expected</h4>${text(r.expected)}
    <dl>${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}</dl></details>`;
  });
  const link = (p: number) => `/cases/${encodeURIComponent(key)}?${new URLSearchParams({ q: search, outcome, page: String(p) }).toString()}`;
  const pages = Math.ceil(matched / PAGE_SIZE);
  const pager = pages > 1 ? `<p>${page > 0 ? `<a href="${esc(link(page - 1))}">← previous</a> ` : ''}page ${page + 1} of ${pages}${page + 1 < pages ? ` <a href="${esc(link(page + 1))}">next →</a>` : ''}</p>` : '';
  return layout(
    `joulebench · cases of ${key}`,
    `<p class="sub">${esc(run.suite ?? '?')} · ${esc(run.target ?? '?')} · <a href="/run/${esc(key)}">figures</a></p>
  <form class="controls" method="get"><input type="search" name="q" value="${esc(search)}" placeholder="search id, answer, expected, error, stored prompt" aria-label="search">
  <select name="outcome" aria-label="outcome">${OUTCOMES.map((o) => opt(o, outcome)).join('')}</select><button>show</button> <span class="sub" id="case-count">${matched} scored case(s) match</span></form>
  ${items.join('\n')}${pager}`,
  );
}

/** The solver's diff as the datapoint keeps it (clipped), or why there is none. */
function diffOf(d: Datapoint): string {
  if (d.diff === undefined) return '<p class="note">no diff in these results (they were written before datapoints kept one, or the solver never ran)</p>';
  if (d.diff === null) return `<p class="note warn">${esc(d.diff_error ?? 'no diff')}</p>`;
  if (d.diff === '') return '<p class="sub">the solver changed nothing</p>';
  const clipped = d.diff_bytes !== undefined && d.diff_bytes > Buffer.byteLength(d.diff) ? `<p class="note">first ${Buffer.byteLength(d.diff)} of ${d.diff_bytes} bytes</p>` : '';
  return `<pre class="diff">${esc(d.diff)}</pre>${clipped}`;
}

/** A code run's datapoints: the solver's diff, per-test outcomes, its output tail, files it touched. */
function datapointsPage(s: ViewSources, run: ViewRun): string {
  const input = loadInputs([run.spec], s.history, { cases: false })[0]!;
  if (input.kind !== 'code') return notFound();
  const tests = (t: Datapoint['grade']) =>
    !t ? '<p class="sub">not graded</p>' : `<table><tbody>${Object.entries(t.reported ?? t.tests ?? {}).map(([n, o]) => `<tr><td class="mono">${esc(n)}</td><td>${esc(typeof o === 'string' ? o : JSON.stringify(o))}</td></tr>`).join('')}</tbody></table>${t.output_tail ? `<pre>${esc(t.output_tail)}</pre>` : ''}`;
  const items = input.results.datapoints.map(
    (d) => `<details class="case" data-task="${esc(d.task)}"><summary><span class="mono">${esc(d.task)}</span> · ${esc(d.solver)} · rollout ${d.rollout} · ${d.resolved ? 'resolved' : d.valid ? 'not resolved' : `invalid (${esc(d.invalid_reason ?? '?')})`} · ${esc(fmtJoules(d.joules))} [${esc(d.energy_source)}]</summary>
    <dl><dt>files changed outside the tests</dt><dd>${esc(d.escapes.join(', ') || 'none outside the workdir')}</dd><dt>test files changed (restored)</dt><dd>${esc(d.tests_modified.join(', ') || 'none')}</dd>
    ${d.workdir ? `<dt>workdir</dt><dd>kept in ${esc(d.workdir)}</dd>` : ''}${d.grade_reason ? `<dt>why not resolved</dt><dd>${esc(d.grade_reason)}</dd>` : ''}${d.error ? `<dt>error</dt><dd>${esc(d.error)}</dd>` : ''}</dl>
    <h4>diff</h4>${diffOf(d)}
    <h4>tests after the solver</h4>${tests(d.grade)}<h4>solver output (tail)</h4><pre>${esc(d.solver_run?.output_tail ?? 'none')}</pre></details>`,
  );
  return layout(`joulebench · datapoints of ${run.key}`, `<p class="sub">${esc(run.suite ?? '?')} · <a href="/run/${esc(run.key)}">figures</a></p>${items.join('\n')}`);
}

/** Two runs side by side: the paired figures with intervals, and which cases flipped. */
export async function comparePage(s: ViewSources, keys: readonly string[]): Promise<string | null> {
  if (keys.length !== 2) return layout('joulebench · compare', `<p class="note warn">Select exactly two runs to compare (got ${keys.length}).</p>`);
  const runs = keys.map((k) => s.byKey.get(k));
  if (runs.some((r) => r === undefined || r.kind !== 'suite')) return runs.some((r) => r === undefined) ? null : layout('joulebench · compare', '<p class="note warn">compare takes two suite runs.</p>');
  const [base, cand] = loadRuns(runs.map((r) => r!.spec), s.history, { cases: true });
  const bd = base!.report.suite?.digest;
  const cd = cand!.report.suite?.digest;
  const same = !bd || !cd || bd === cd;
  const c = withPairedStats(compare(base!.report, cand!.report), { digest: bd, results: base!.results }, { digest: cd, results: cand!.results });
  const figures = comparisonRows(c).map((r) => `<tr><td>${esc(r.metric)}</td><td class="num">${esc(r.baseline)}</td><td class="num">${esc(r.candidate)}</td><td class="num">${esc(r.change)}</td><td class="num">${esc(r.interval ?? 'n/a')}</td><td>${esc(r.verdict ?? 'n/a')}</td></tr>`);
  const before = new Map((base!.results ?? []).map((r) => [`${r.pass}:${r.index}`, r]));
  const tally = { fixed: 0, broke: 0, same: 0, unpaired: 0 };
  const flips: string[] = [];
  for (const r of same ? (cand!.results ?? []) : []) {
    const b = before.get(`${r.pass}:${r.index}`);
    const kind = !b || b.passed === null || r.passed === null ? 'unpaired' : b.passed === r.passed ? 'same' : r.passed ? 'fixed' : 'broke';
    tally[kind]++;
    if (!b || (kind !== 'fixed' && kind !== 'broke')) continue;
    const caseLink = (k: string) => `/cases/${encodeURIComponent(k)}?q=${encodeURIComponent(r.case_id)}`;
    flips.push(`<tr class="flip ${r.passed ? 'fixed' : 'broke'}" data-case="${esc(r.case_id)}"><td class="mono">${esc(r.case_id)}${r.pass > 0 ? ` (pass ${r.pass})` : ''}</td><td>${r.passed ? 'fixed: wrong → correct' : 'broke: correct → wrong'}</td>
      <td class="num">${esc(fmtJoules(b.joules))} → ${esc(fmtJoules(r.joules))}</td><td class="num">${esc(fmtMs(Number(b.latency_ms.toFixed(1))))} → ${esc(fmtMs(Number(r.latency_ms.toFixed(1))))}</td>
      <td><a href="${esc(caseLink(keys[0]!))}">baseline</a> · <a href="${esc(caseLink(keys[1]!))}">candidate</a></td></tr>`);
  }
  const how = 'significant' in c ? pairedHow(c) : null;
  return layout(
    `joulebench · ${base!.label} vs ${cand!.label}`,
    `<p class="sub">baseline <a href="/run/${esc(keys[0]!)}">${esc(base!.label)}</a> (${esc(base!.origin)}) · candidate <a href="/run/${esc(keys[1]!)}">${esc(cand!.label)}</a> (${esc(cand!.origin)})</p>
  ${same ? '' : '<p class="note warn">The two runs asked different cases (suite digests differ): no paired change, interval or flipped case is shown.</p>'}
  <section><h2>Figures</h2><div class="scroll"><table><thead><tr><th>figure</th><th>baseline</th><th>candidate</th><th>change</th><th>95 % interval</th><th>verdict</th></tr></thead><tbody>${figures.join('')}</tbody></table></div>
  ${how ? `<p class="note">${esc(how)}</p>` : c.paired_reason ? `<p class="note">${esc(c.paired_reason)}</p>` : ''}</section>
  <section id="flips"><h2>Flipped cases <span class="sub">${tally.fixed} fixed · ${tally.broke} broke · ${tally.same} unchanged · ${tally.unpaired} unpaired or unscored</span></h2>
  ${flips.length ? `<div class="scroll"><table><thead><tr><th>case</th><th>flip</th><th>energy</th><th>latency</th><th>transcripts</th></tr></thead><tbody>${flips.join('')}</tbody></table></div>` : '<p class="note empty">No case flipped.</p>'}</section>`,
  );
}

/** J/correct, accuracy and $/correct over time per suite and target, from the history's suite runs. */
export function trendsPage(s: ViewSources): string {
  const runs = s.runs.filter((r) => r.key.startsWith('h') && r.kind === 'suite' && r.date !== null).sort((a, b) => (a.date! < b.date! ? -1 : 1));
  const series = new Map<string, { name: string; points: { key: string; date: string; accuracy_pct: number | null; joules_per_correct: number | null; usd_per_correct: number | null; energy_source: string | null }[] }>();
  for (const r of runs) {
    const name = `${r.suite ?? '?'} · ${r.target ?? '?'}`;
    if (!series.has(name)) series.set(name, { name, points: [] });
    series.get(name)!.points.push({ key: r.key, date: r.date!, accuracy_pct: r.accuracy_pct, joules_per_correct: r.joules_per_correct, usd_per_correct: r.usd_per_correct, energy_source: r.energy_source });
  }
  const data = JSON.stringify([...series.values()]).replace(/</g, '\\u003c');
  const charts = [['joules_per_correct', 'J / correct'], ['accuracy_pct', 'accuracy %'], ['usd_per_correct', '$ / correct']]
    .map(([k, t]) => `<h2>${t}</h2><div class="chart" data-trend="${k}" data-title="${t}"></div>`)
    .join('');
  const table = [...series.values()].map((x) => `<tr><td>${esc(x.name)}</td><td class="num">${x.points.length}</td><td>${esc(x.points[0]!.date)} → ${esc(x.points.at(-1)!.date)}</td></tr>`).join('');
  return layout(
    'joulebench · trends',
    runs.length === 0
      ? '<p class="note empty">No suite runs in the history yet.</p>'
      : `<p class="sub">One line per suite and target, one point per run in the history; a point with no figure (n/a) is left out, never drawn as 0. Energy of different sources is not comparable: each point's tooltip names its source.</p>${charts}
  <div class="scroll"><table><thead><tr><th>suite · target</th><th>runs</th><th>from → to (UTC)</th></tr></thead><tbody>${table}</tbody></table></div>
  <script type="application/json" id="trend-data">${data}</script>`,
    runs.length > 0,
  );
}
