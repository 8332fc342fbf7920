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
  /** One entry per kind of energy with figures (measured and modelled never share an axis), or why none. */
  energy: { kind: 'measured' | 'modelled' | 'other'; sources: string[]; points: number; drawn: boolean; why: string | null }[];
  /** Why there is no J/output-token chart at all (no figure of either kind); `null` when there is one. */
  energy_missing: string | null;
}

type LoadRun = { label: string; report: BenchReport & { load?: LoadBlock } };

/**
 * The rate curves among the runs: runs carrying a `load` block are grouped by what a rate sweep keeps
 * fixed (target, suite digest, arrival shape, concurrency, request count, seed, TTFT token), and each
 * group is one curve ordered by rate. Pure.
 */
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
    return { title, points, latency: latencyChart(points), ...energyCharts(points) };
  });
}

function latencyChart(points: readonly RatePoint[]): RateCurveView['latency'] {
  const ttft = points.filter((p) => p.output_throughput !== null && p.p99_ttft_ms !== null).length;
  const tpot = points.filter((p) => p.output_throughput !== null && p.p99_tpot_ms !== null).length;
  if (ttft >= 2 || tpot >= 2) return { drawn: true, ttft_points: ttft, tpot_points: tpot, why: null };
  const why =
    points.length < 2
      ? `only one rate (${rateText(points[0]?.request_rate ?? null)}) was run, and one point shows no trade-off: run several, e.g. --request-rate 1,2,4,inf`
      : ttft + tpot === 0
        ? 'no rate completed a request with a first token (throughput and TTFT are n/a at every rate)'
        : 'only one rate has throughput and latency figures; the others completed no request with a first token';
  return { drawn: false, ttft_points: ttft, tpot_points: tpot, why };
}

function energyCharts(points: readonly RatePoint[]): Pick<RateCurveView, 'energy' | 'energy_missing'> {
  const withJ = points.filter((p) => p.joules_per_output_token !== null);
  const energy: RateCurveView['energy'] = [];
  for (const kind of ['measured', 'modelled'] as const) {
    const mine = withJ.filter((p) => energyKind(p.energy_source) === kind);
    if (mine.length === 0) continue;
    const sources = [...new Set(mine.map((p) => p.energy_source))];
    const drawn = mine.length >= 2;
    energy.push({
      kind,
      sources,
      points: mine.length,
      drawn,
      why: drawn ? null : `only one rate (${rateText(mine[0]!.request_rate)}) has a ${kind} J/output-token figure [${sources.join(', ')}]; one point shows no trend, so no chart: its figure is in the table`,
    });
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

function rateText(rate: number | 'inf' | null): string {
  return rate === null ? '?' : rate === 'inf' ? 'inf' : `${rate}/s`;
}

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
      : `<p class="note empty" data-missing-chart="rate-latency">No throughput–latency chart: ${esc(c.latency.why ?? '')}.</p>`;
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
  <div><h3>Throughput against p99 latency</h3>${latency}</div>
  <div><h3>Joules per output token against request rate</h3>${energy}</div>
  </div>
  <div class="scroll"><table class="rate-curve" data-curve="${i}"><thead><tr><th>rate</th><th>accuracy</th><th>req/s</th><th>output tok/s</th><th>p99 TTFT ms</th><th>p99 TPOT ms</th><th>goodput req/s</th><th>correct goodput req/s</th><th>J / output token</th><th></th></tr></thead>
  <tbody>${rows}</tbody></table></div>`;
  });
  return `<section id="rate-sweep">
  <h2>Serving load: throughput, latency and energy per request rate</h2>
  <p class="sub">One point per request rate (open-loop load runs, docs/load.md). Latency is vLLM's p99 TTFT (to the first token) and p99 TPOT (per output token after the first); throughput is completed output tokens per second. J per output token is over the steady-state window (ML.ENERGY's rule) or, where that window was unusable, the whole run (hollow points); measured and modelled energy are never drawn on one axis.</p>
  ${blocks.join('\n')}
</section>`;
}

/** The charts' script (appended to the page script, inside its scope: `M`, `chart`, `fmtJ`, `fmtMs`). */
export const RATE_CHART_SCRIPT = String.raw`
  // Rate sweeps: throughput against p99 TTFT/TPOT (one point per rate, labelled), and J/output token per rate.
  (function () {
    var curves = M.rate_curves || [];
    function rateText(r) { return r === 'inf' ? 'inf' : r + '/s'; }
    function logWanted(ys) {
      var pos = ys.filter(function (v) { return v > 0; });
      return pos.length === ys.length && pos.length > 1 && Math.max.apply(null, pos) / Math.min.apply(null, pos) > 20;
    }
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="rate-latency"]'), function (el) {
      var c = curves[Number(el.getAttribute('data-curve'))];
      if (!c) return;
      var pick = function (key) {
        return c.points.filter(function (p) { return p.output_throughput !== null && p[key] !== null; }).map(function (p) {
          return { value: [p.output_throughput, p[key]], name: rateText(p.request_rate), point: p };
        });
      };
      var ttft = pick('p99_ttft_ms');
      var tpot = pick('p99_tpot_ms');
      var ys = ttft.concat(tpot).map(function (d) { return d.value[1]; });
      var useLog = logWanted(ys);
      var series = [];
      var label = { show: true, position: 'top', fontSize: 11, formatter: function (p) { return p.name; } };
      if (ttft.length) series.push({ name: 'p99 TTFT', type: 'line', symbolSize: 9, data: ttft, label: label });
      if (tpot.length) series.push({ name: 'p99 TPOT', type: 'line', symbolSize: 9, data: tpot, label: label, lineStyle: { type: 'dashed' } });
      chart(el.id, {
        grid: { left: 64, right: 32, top: 40, bottom: 56 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var q = p.data.point;
          return 'rate ' + rateText(q.request_rate) + '<br>' + q.request_throughput + ' req/s, ' + q.output_throughput + ' output tok/s<br>p99 TTFT ' + fmtMs(q.p99_ttft_ms) + '<br>p99 TPOT ' + fmtMs(q.p99_tpot_ms) + (q.client_bottleneck ? '<br>client-bound (p99 lag > 10 ms)' : '');
        } },
        xAxis: { type: 'value', scale: true, name: 'output throughput, tok/s \u2192', nameLocation: 'middle', nameGap: 32 },
        yAxis: { type: useLog ? 'log' : 'value', scale: true, name: 'p99 latency, ms' + (useLog ? ' (log)' : ''), nameLocation: 'middle', nameGap: 48 },
        series: series,
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart="rate-energy"]'), function (el) {
      var c = curves[Number(el.getAttribute('data-curve'))];
      var kind = el.getAttribute('data-energy');
      if (!c) return;
      var e = c.energy.filter(function (x) { return x.kind === kind && x.drawn; })[0];
      if (!e) return;
      var data = c.points.map(function (p) {
        var mine = p.joules_per_output_token !== null && e.sources.indexOf(p.energy_source) >= 0;
        return mine ? { value: p.joules_per_output_token, point: p, symbol: p.steady_state ? 'circle' : 'emptyCircle' } : null;
      });
      var ys = data.filter(function (d) { return d !== null; }).map(function (d) { return d.value; });
      var useLog = logWanted(ys);
      chart(el.id, {
        grid: { left: 80, right: 32, top: 40, bottom: 56 },
        tooltip: { trigger: 'item', formatter: function (p) {
          var q = p.data.point;
          return 'rate ' + rateText(q.request_rate) + '<br>' + fmtJ(q.joules_per_output_token) + ' per output token [' + q.energy_source + ']<br>' + (q.steady_state ? 'steady-state window' : 'whole run (no usable steady-state window)');
        } },
        xAxis: { type: 'category', data: c.points.map(function (p) { return rateText(p.request_rate); }), name: 'request rate', nameLocation: 'middle', nameGap: 32 },
        yAxis: { type: useLog ? 'log' : 'value', scale: true, name: kind + ' J / output token [' + e.sources.join(', ') + ']' + (useLog ? ' (log)' : ''), nameLocation: 'middle', nameGap: 64,
          axisLabel: { formatter: function (v) { return fmtJ(v); } } },
        series: [{ name: kind + ' J / output token', type: 'line', symbolSize: 9, connectNulls: true, data: data }],
      });
    });
  })();
`;
