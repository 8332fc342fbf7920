import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EnergyLayers, PowerTraceSummary } from '../../src/core/energy.js';
import { energySection, energyViewsOf } from '../../src/report/html/energy-section.js';
import type { ReportInput } from '../../src/report/inputs.js';

const trace: PowerTraceSummary = { interval_ms: 100, domains: ['package-0'], rows: [['2026-12-02T00:00:01.000Z', 'idle', 1000, 20], ['2026-12-02T00:00:02.000Z', 'scored', 1000, 45]] };
const layers: EnergyLayers = {
  covered: ['host', 'facility'],
  accelerator: null,
  host: { tag: 'measured', joules: 45, joules_per_correct: 0.5, domains: ['package-0'] },
  idle: null,
  facility: { tag: 'modelled', joules: 22.5, joules_per_correct: 0.25, pue: 1.5, total_joules: 67.5 },
} as unknown as EnergyLayers;

test('the energy section shows each infer arm its own trace and layers, and each code solver its layers', () => {
  const infer = {
    kind: 'infer',
    label: 'infer.json',
    file: {
      arms: [{ id: 'tiny@t=1', power_trace: trace }, { id: 'tiny@t=2' }],
      summary: { arms: [{ id: 'tiny@t=1', stats: { energy: { layers } } }, { id: 'tiny@t=2', stats: null }] },
    },
  } as unknown as ReportInput;
  const code = { kind: 'code', label: 'agents.json', results: { solvers: [{ id: 'reference', energy_layers: layers }, { id: 'noop' }] } } as unknown as ReportInput;
  const views = energyViewsOf([infer, code]);
  assert.deepEqual(
    views.map((v) => [v.label, v.power_trace !== null, v.layers !== null]),
    [
      ['infer.json · tiny@t=1', true, true],
      ['agents.json · reference', false, true],
    ],
  );
  const html = energySection(views);
  assert.equal((html.match(/data-chart="power"/g) ?? []).length, 1);
  assert.match(html, /PUE 1\.5/);
});
