import type { EnergyLayer, EnergyLayers, PowerTraceSummary, WindowValidity } from '../../core/energy.js';
import { esc, fmtJoules } from '../format.js';
import type { ReportInput } from '../inputs.js';

/** What the page shows of an input's energy beyond its figures: its power trace, its windows' validity, its boundary layers. */
export interface EnergyView {
  label: string;
  /** Each energy window that kept its samples, with what it was. */
  validity: { window: string; v: WindowValidity }[];
  /** Scored cases whose own window failed its checks (never summed). */
  invalid_cases: number;
  layers: EnergyLayers | null;
  power_trace: PowerTraceSummary | null;
}

/** The blocks any input's document may carry (a suite or load report, a code results file, an infer run file). */
interface EnergyFields {
  power_trace?: PowerTraceSummary;
  suite_window_validity?: WindowValidity;
  energy_invalid_count?: number;
  energy_layers?: EnergyLayers;
  load?: { energy?: { steady_state?: boolean; validity?: WindowValidity } };
}

/** A code run's solver rows and an infer file's arms: each has its own layers (and an infer arm its own trace). */
interface PartFields {
  solvers?: { id: string; energy_layers?: EnergyLayers }[];
  arms?: { id: string; power_trace?: PowerTraceSummary }[];
  summary?: { arms?: { id: string; stats: { energy?: { layers?: EnergyLayers } } | null }[] };
}

/** One view per input (and per code solver or infer arm) that carries any of these blocks, read by field name. Pure. */
export function energyViewsOf(inputs: readonly ReportInput[]): EnergyView[] {
  return inputs.flatMap((x) => {
    const d = (x.kind === 'suite' ? x.report : x.kind === 'code' ? x.results : x.file) as EnergyFields & PartFields;
    const validity: EnergyView['validity'] = [];
    if (d.suite_window_validity) validity.push({ window: 'suite window', v: d.suite_window_validity });
    const le = d.load?.energy;
    if (le?.validity) validity.push({ window: le.steady_state ? 'steady-state window' : 'whole-run window', v: le.validity });
    const whole = viewOf(x.label, validity, d.energy_invalid_count ?? 0, d.energy_layers, d.power_trace);
    const solvers = (d.solvers ?? []).map((s) => viewOf(`${x.label} · ${s.id}`, [], 0, s.energy_layers, undefined));
    const layersOfArm = new Map((d.summary?.arms ?? []).map((a) => [a.id, a.stats?.energy?.layers]));
    const arms = (d.arms ?? []).map((a) => viewOf(`${x.label} · ${a.id}`, [], 0, layersOfArm.get(a.id), a.power_trace));
    return [whole, ...solvers, ...arms].filter((v): v is EnergyView => v !== null);
  });
}

function viewOf(label: string, validity: EnergyView['validity'], invalid_cases: number, layers: EnergyLayers | undefined, pt: PowerTraceSummary | undefined): EnergyView | null {
  const trace = pt && Array.isArray(pt.rows) && Array.isArray(pt.domains) && pt.rows.length > 0 ? pt : null;
  const view: EnergyView = { label, validity, invalid_cases, layers: layers ?? null, power_trace: trace };
  return view.validity.length > 0 || view.invalid_cases > 0 || view.layers || view.power_trace ? view : null;
}

/** Power over time (drawn by power.js), validity checks and boundary layers per input; empty when none has any. */
export function energySection(views: readonly EnergyView[]): string {
  if (views.length === 0) return '';
  const blocks = views.map((e, i) => {
    const pt = e.power_trace;
    const chart = pt
      ? `<div class="chart" id="chart-power-${i}" data-chart="power" data-view="${i}"></div>
  <p class="note">Mean watts per meter domain over each row (${pt.rows.length} rows, from ${esc(pt.rows[0]![0])} UTC; the CSV has one per ${pt.interval_ms} ms); the run's phases shaded. Gaps: a domain that did not read.</p>`
      : '';
    return `<h3>${esc(e.label)}</h3>${chart}${validityTable(e)}${layersTable(e.layers)}`;
  });
  return `<section id="energy">
  <h2>Energy: power over time, validity, boundary layers</h2>
  <p class="sub">Whether each energy window's meter samples can be trusted (an invalid window gives no J/correct), and which boundaries the energy covers, each measured or modelled; see docs/energy-meters.md.</p>
  ${blocks.join('\n')}
</section>`;
}

function validityTable(e: EnergyView): string {
  const pct = (v: number | null): string => (v === null ? 'n/a' : `${v.toFixed(1)} %`);
  const ms = (v: number | null): string => (v === null ? 'n/a' : `${Math.round(v)} ms`);
  const rows = e.validity.map(
    ({ window, v }) => `<tr data-valid="${v.valid}"><td>${esc(window)}</td>
      <td>${v.valid ? '<span class="ok">valid</span>' : `<span class="err">invalid</span><div class="sub">${esc(v.reasons.join('; '))}</div>`}</td>
      <td>${esc(v.meter)}<div class="sub">${esc(v.devices.join(', ') || 'no device')}</div></td>
      <td class="num">${v.samples}</td><td class="num">${pct(v.coverage_pct)}</td><td class="num">${ms(v.max_gap_ms)}</td><td class="num">${v.wraps}</td><td class="num">${v.failed_reads}</td></tr>`,
  );
  const cases = e.invalid_cases > 0 ? `<p class="note warn">${e.invalid_cases} case window(s) failed the validity checks (not summed).</p>` : '';
  if (rows.length === 0) return cases;
  return `<div class="scroll"><table class="validity"><thead><tr><th>window</th><th>verdict</th><th>meter · devices</th><th>samples</th><th>coverage</th><th>largest gap</th><th>counter wraps</th><th>failed reads</th></tr></thead>
  <tbody>${rows.join('')}</tbody></table></div>${cases}`;
}

function layersTable(l: EnergyLayers | null): string {
  if (!l) return '';
  const row = (name: string, x: EnergyLayer | null, what: string): string =>
    x === null
      ? `<tr class="absent"><td>${name}</td><td colspan="3" class="sub">not measured by this run</td><td class="sub">${esc(what)}</td></tr>`
      : `<tr data-layer="${name}"><td>${name}</td><td><span class="badge ${x.tag}">${x.tag}</span></td><td class="num">${esc(fmtJoules(x.joules))}</td><td class="num">${esc(fmtJoules(x.joules_per_correct))}</td>
        <td class="sub">${esc([x.domains?.join(', '), what].filter(Boolean).join(' · '))}</td></tr>`;
  const f = l.facility;
  return `<div class="scroll"><table class="layers"><thead><tr><th>layer</th><th>basis</th><th>energy</th><th>J / correct</th><th>covers</th></tr></thead><tbody>
  ${row('accelerator', l.accelerator, 'GPU / accelerator (NVML, AMD SMI)')}
  ${row('host', l.host, 'CPU packages, DRAM (RAPL)')}
  ${row('idle', l.idle, l.idle ? (l.idle.subtracted ? 'idle watts × window, subtracted from the net figures' : 'idle watts × window, not subtracted') : 'idle watts × window')}
  ${row('facility', f, f ? `(PUE ${f.pue} − 1) × measured gross; gross × PUE = ${fmtJoules(f.total_joules)}, never added to a measured figure` : 'facility overhead (run --pue)')}
  </tbody></table></div>`;
}
