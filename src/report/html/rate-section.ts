import type { BenchReport } from '../../core/aggregate.js';
import type { LoadBlock } from '../../load/block.js';
import { compareRates, energyKind, rateCurve, type RatePoint } from '../../load/curve.js';
import { esc, fmtJoules, fmtPct } from '../format.js';

/** One rate sweep's curve as the page draws it: load runs of one system under one load setting. */
export interface RateCurveView {
  /** What the runs share: target, suite, burstiness, concurrency, requests. */
  title: string;
  /** One point per run, ordered by rate (`inf` last); `run` is the run's label. */
  points: (RatePoint & { run: string })[];
  /** Which charts exist, decided here so the static page and its script agree. */
  latency: { drawn: boolean; ttft_points: number; tpot_points: number; why: string | null };
  /** Throughput per rate, with goodput beside it when an SLO was set (`slo`). */
  goodput: { drawn: boolean; slo: boolean; why: string | null };
  /** One entry per kind of energy with figures (measured and modelled never share an axis), or why none. */
  energy: { kind: 'measured' | 'modelled' | 'other'; sources: string[]; points: number; drawn: boolean; why: string | null }[];
  /** Why there is no J/output-token chart at all (no figure of either kind); `null` when there is one. */
  energy_missing: string | null;
}

type LoadRun = { label: string; report: BenchReport & { load?: LoadBlock } };

/** Load runs grouped by what a rate sweep keeps fixed (target, suite, load shape…): one curve per group, by rate. */
export function rateCurvesOf(runs: readonly LoadRun[]): RateCurveView[] {
  const groups = new Map<string, LoadRun[]>();
  for (const r of runs) {
    const l = r.report.load;
    if (!l) continue;
    const key = JSON.stringify([r.report.target, r.report.suite?.digest, l.burstiness, l.max_concurrency, l.num_requests, l.seed, l.ttft_token]);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((members) => {
    const sorted = [...members].sort((a, b) => compareRates(a.report.load!.request_rate, b.report.load!.request_rate));
    const curve = rateCurve(sorted.map((r) => ({ accuracy_pct: r.report.accuracy_pct, load: r.report.load! })));
    const points = curve.map((p, i) => ({ ...p, run: sorted[i]!.label }));
    const l = sorted[0]!.report.load!;
    const title = `${sorted[0]!.report.target ?? '?'} · suite ${sorted[0]!.report.suite?.name ?? '?'} · ${l.num_requests} requests per rate, burstiness ${l.burstiness}, max concurrency ${l.max_concurrency ?? 'unbounded'}`;
    return { title, points, latency: latencyChart(points), goodput: goodputChart(points), ...energyCharts(points) };
  });
}

function latencyChart(points: readonly RatePoint[]): RateCurveView['latency'] {
  const ttft = points.filter((p) => p.p99_ttft_ms !== null).length;
  const tpot = points.filter((p) => p.p99_tpot_ms !== null).length;
  if (ttft >= 2 || tpot >= 2) return { drawn: true, ttft_points: ttft, tpot_points: tpot, why: null };
  const why =
    points.length < 2
      ? `only one rate (${rateText(points[0]?.request_rate ?? null)}) was run, and one point shows no trade-off: run several, e.g. --request-rate 1,2,4,inf`
      : ttft + tpot === 0
        ? 'no rate completed a request with a first token (TTFT and TPOT are n/a at every rate)'
        : 'only one rate has latency figures; the others completed no request with a first token';
  return { drawn: false, ttft_points: ttft, tpot_points: tpot, why };
}

function goodputChart(points: readonly RatePoint[]): RateCurveView['goodput'] {
  const slo = points.some((p) => p.request_goodput !== null);
  if (points.filter((p) => p.request_throughput !== null).length >= 2) return { drawn: true, slo, why: null };
  return { drawn: false, slo, why: points.length < 2 ? `only one rate (${rateText(points[0]?.request_rate ?? null)}) was run` : 'fewer than two rates completed a request' };
}

function energyCharts(points: readonly RatePoint[]): Pick<RateCurveView, 'energy' | 'energy_missing'> {
  const withJ = points.filter((p) => p.joules_per_output_token !== null);
  const energy: RateCurveView['energy'] = [];
  for (const kind of ['measured', 'modelled'] as const) {
    const mine = withJ.filter((p) => energyKind(p.energy_source) === kind);
    if (mine.length === 0) continue;
    const sources = [...new Set(mine.map((p) => p.energy_source))];
    const drawn = mine.length >= 2;
    const why =
      `only one rate (${rateText(mine[0]!.request_rate)}) has a ${kind} J/output-token figure [${sources.join(', ')}]; ` +
      'one point shows no trend, so no chart: its figure is in the table';
    energy.push({ kind, sources, points: mine.length, drawn, why: drawn ? null : why });
  }
  if (energy.length > 0) {
    const unplaced = withJ.filter((p) => energyKind(p.energy_source) === null);
    if (unplaced.length > 0) {
      energy.push({ kind: 'other', sources: [...new Set(unplaced.map((p) => p.energy_source))], points: unplaced.length, drawn: false, why: `not drawn: ${unplaced.map((p) => `${rateText(p.request_rate)} [${p.energy_source}]`).join(', ')} (a source that may combine measured and modelled energy)` });
    }
    return { energy, energy_missing: null };
  }
  const sources = [...new Set(points.map((p) => p.energy_source))];
  const why =
    withJ.length > 0
      ? `the J/output-token figures come from ${sources.join(', ')}, which may combine measured and modelled energy, so they are not drawn on either axis; they are in the table`
      : sources.every((s) => s === 'none')
        ? 'no rate has an energy figure: no meter read energy in these runs (energy source none); run with a meter (--meter rapl, nvml, estimate, …) to get J per output token'
        : `no rate has a J/output-token figure (energy source ${sources.join(', ')}: the meter read nothing over the window, or no output tokens were counted)`;
  return { energy: [], energy_missing: why };
}

const rateText = (rate: number | 'inf' | null): string => (rate === null ? '?' : rate === 'inf' ? 'inf' : `${rate}/s`);

const num = (v: number | null, digits = 2): string => (v === null ? 'n/a' : Number.isInteger(v) ? String(v) : v.toFixed(digits));

/** The load section: per curve a table (readable with scripts off) and the two charts, or sentences saying why not. */
export function rateSection(curves: readonly RateCurveView[]): string {
  if (curves.length === 0) return '';
  const blocks = curves.map((c, i) => {
    const rows = c.points
      .map(
        (p) => `<tr data-rate="${esc(String(p.request_rate))}"><td>${esc(rateText(p.request_rate))}<div class="sub">${esc(p.run)}</div></td>
        <td class="num">${esc(fmtPct(p.accuracy_pct))}</td><td class="num">${esc(num(p.request_throughput))}</td><td class="num">${esc(num(p.output_throughput))}</td>
        <td class="num">${esc(num(p.p99_ttft_ms))}</td><td class="num">${esc(num(p.p99_tpot_ms))}</td>
        <td class="num">${esc(num(p.request_goodput))}</td><td class="num">${esc(num(p.correct_goodput))}</td>
        <td class="num">${p.joules_per_output_token === null ? 'n/a' : esc(fmtJoules(p.joules_per_output_token))} <span class="src">[${esc(p.energy_source)}]</span><div class="sub">${p.joules_per_output_token === null ? '' : p.steady_state ? 'steady state' : 'whole run'}</div></td>
        <td>${p.client_bottleneck ? '<span class="warn">client-bound</span>' : ''}</td></tr>`,
      )
      .join('');
    const latency = c.latency.drawn
      ? `<div class="chart" id="chart-rate-latency-${i}" data-chart="rate-latency" data-curve="${i}"></div>`
      : `<p class="note empty" data-missing-chart="rate-latency">No TTFT/TPOT chart: ${esc(c.latency.why ?? '')}.</p>`;
    const goodput = c.goodput.drawn
      ? `<div class="chart" id="chart-rate-goodput-${i}" data-chart="rate-goodput" data-curve="${i}"></div>${c.goodput.slo ? '' : '<p class="note" data-missing-chart="rate-goodput">Goodput n/a: no SLO was set (run --slo ttft_ms=…,tpot_ms=… for requests meeting it per second); throughput only.</p>'}`
      : `<p class="note empty" data-missing-chart="rate-goodput">No throughput/goodput chart: ${esc(c.goodput.why ?? '')}.</p>`;
    const energy = c.energy_missing
      ? `<p class="note empty" data-missing-chart="rate-energy">No J/output-token chart: ${esc(c.energy_missing)}.</p>`
      : c.energy
          .map((e) =>
            e.drawn
              ? `<div class="chart" id="chart-rate-energy-${i}-${e.kind}" data-chart="rate-energy" data-curve="${i}" data-energy="${e.kind}"></div>`
              : `<p class="note empty" data-missing-chart="rate-energy">${e.kind === 'other' ? 'Some J/output-token figures are' : `No ${esc(e.kind)} J/output-token chart:`} ${esc(e.why ?? '')}.</p>`,
          )
          .join('\n');
    return `<h3>${esc(c.title)}</h3>
  <div class="rate-pair">
  <div><h3>p99 TTFT and TPOT against request rate</h3>${latency}</div>
  <div><h3>Throughput and goodput against request rate</h3>${goodput}</div>
  <div><h3>Joules per output token against request rate</h3>${energy}</div>
  </div>
  <div class="scroll"><table class="rate-curve" data-curve="${i}"><thead><tr><th>rate</th><th>accuracy</th><th>req/s</th><th>output tok/s</th><th>p99 TTFT ms</th><th>p99 TPOT ms</th><th>goodput req/s</th><th>correct goodput req/s</th><th>J / output token</th><th></th></tr></thead>
  <tbody>${rows}</tbody></table></div>`;
  });
  return `<section id="rate-sweep">
  <h2>Serving load: throughput, latency and energy per request rate</h2>
  <p class="sub">One point per request rate (open-loop load runs, docs/load.md). Latency is vLLM's p99 TTFT (to the first token) and p99 TPOT (per output token after the first); throughput is completed requests per second, goodput those meeting every SLO given (DistServe's definition, as vLLM's benchmark_serving). J per output token is over the steady-state window (ML.ENERGY's rule) or, where that window was unusable, the whole run (hollow points); measured and modelled energy are never drawn on one axis.</p>
  ${blocks.join('\n')}
</section>`;
}
