import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { energyLayers } from '../../src/core/energy.js';
import { cli } from '../helpers/cli.js';
import { writePowercapTree } from '../meters/powercap-tree.js';

describe('energy layers', () => {
  const window = {
    joules: 30,
    window_ms: 2000,
    by_domain: { 'package-0': { joules: 8, source: 'rapl' as const }, 'dram-0': { joules: 2, source: 'rapl' as const }, 'gpu-0': { joules: 20, source: 'nvml' as const } },
  };

  it('accelerator (NVML) and host (RAPL package + DRAM) measured, idle measured and subtracted, facility modelled from the PUE', () => {
    const l = energyLayers(window, { status: 'measured', watts: 5 }, 10, 1.5);
    assert.deepEqual(l.covered, ['accelerator', 'host', 'idle', 'facility']);
    assert.deepEqual(l.accelerator, { tag: 'measured', joules: 20, joules_per_correct: 2, domains: ['gpu-0'] });
    assert.deepEqual(l.host, { tag: 'measured', joules: 10, joules_per_correct: 1, domains: ['package-0', 'dram-0'] });
    assert.deepEqual(l.idle, { tag: 'measured', joules: 10, joules_per_correct: 1, subtracted: true });
    // The modelled overhead is its own figure; the measured ones are untouched by it.
    assert.deepEqual(l.facility, { tag: 'modelled', joules: 15, joules_per_correct: 1.5, pue: 1.5, total_joules: 45 });
  });

  it('a layer nothing measured is null and not covered; no PUE, no facility layer; an invalid window gives no J/correct', () => {
    const l = energyLayers({ ...window, by_domain: { 'package-0': { joules: 8, source: 'rapl' } } }, { status: 'skipped', watts: null }, 4, null);
    assert.deepEqual(l.covered, ['host']);
    assert.equal(l.accelerator, null);
    assert.equal(l.idle, null);
    assert.equal(l.facility, null);
    const bad = energyLayers({ ...window, validity: { valid: false, reasons: ['x'], meter: 'rapl', devices: [], samples: 1, coverage_pct: null, max_gap_ms: null, wraps: 0, failed_reads: 1 } }, { status: 'skipped', watts: null }, 4, 1.2);
    assert.equal(bad.host!.joules, 10);
    assert.equal(bad.host!.joules_per_correct, null);
    assert.equal(bad.facility!.joules_per_correct, null);
  });
});

describe('run --pue: the layers in the report, and report FILE gives them back', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-layers-'));
  const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 5_000_000 }]);
  after(() => {
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a RAPL run with --pue 1.4: host measured, facility modelled at 0.4 × gross, the validity block beside', async () => {
    const out = join(dir, 'r.json');
    const r = await cli(['run', '--suite', 'router', '--limit', '3', '--meter', 'rapl', '--powercap-root', tree.root, '--no-idle', '--pue', '1.4', '-q', '--no-history', '-o', out], { env: { JOULEBENCH_HOME: dir } });
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(rep.energy_layers.covered, ['host', 'facility']);
    assert.equal(rep.energy_layers.host.tag, 'measured');
    assert.deepEqual(rep.energy_layers.host.domains, ['package-0']);
    assert.equal(rep.energy_layers.facility.tag, 'modelled');
    assert.equal(rep.energy_layers.facility.pue, 1.4);
    assert.equal(rep.energy_layers.facility.joules, Math.round(rep.gross_joules * 0.4 * 1e6) / 1e6);
    assert.equal(rep.suite_window_validity.meter, 'rapl');
    assert.equal(rep.suite_window_validity.valid, true);
    const again = await cli(['report', join(dir, 'r.results.jsonl'), '--json'], { env: { JOULEBENCH_HOME: dir } });
    assert.equal(again.code, 0, again.stderr);
    const rebuilt = JSON.parse(again.stdout);
    assert.deepEqual(rebuilt.energy_layers, rep.energy_layers);
    assert.deepEqual(rebuilt.suite_window_validity, rep.suite_window_validity);
  });

  it('--pue below 1 is refused with exit 2, naming the flag', async () => {
    const r = await cli(['run', '--suite', 'router', '--pue', '0.9', '-q', '--no-history'], { env: { JOULEBENCH_HOME: dir } });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--pue/);
  });
});
