import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cpuCoefficient, matchTdp, readCpuInfo } from '../../src/meters/cpu-tdp.js';
import { DEFAULT_CPU_WATTS_PER_CORE } from '../../src/meters/estimate.js';
import { createMeter } from '../../src/meters/registry.js';
import { cli } from '../helpers/cli.js';

const roots: string[] = [];
after(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A root holding proc/cpuinfo with `n` logical CPUs of `model` over `sockets` packages. */
function fakeRoot(model: string | null, n: number, sockets = 1): string {
  const root = mkdtempSync(join(tmpdir(), 'jb-cpuinfo-'));
  roots.push(root);
  mkdirSync(join(root, 'proc'));
  const blocks = Array.from({ length: n }, (_, i) =>
    [`processor\t: ${i}`, 'vendor_id\t: GenuineIntel', ...(model === null ? [] : [`model name\t: ${model}`]), `physical id\t: ${i % sockets}`, 'flags\t\t: fpu vme'].join('\n'),
  );
  writeFileSync(join(root, 'proc', 'cpuinfo'), `${blocks.join('\n\n')}\n`);
  return root;
}

type Described = { cpu_coefficient: { label: string; basis: string; watts_per_core: number }; coefficients: { cpu_watts_per_core: number } };

describe('estimate: the CPU coefficient from its TDP (CodeCarbon method)', () => {
  it('a listed Xeon: TDP × packages ÷ logical CPUs per busy core, labelled with the table entry', async () => {
    const root = fakeRoot('Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz', 128, 2);
    assert.deepEqual(readCpuInfo(root), { model: 'Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz', sockets: 2, logical_cpus: 128 });
    const meter = await createMeter('estimate', { cpu_root: root });
    const d = meter.describe() as Described;
    assert.equal(d.cpu_coefficient.label, 'estimate: Intel Xeon Gold 6338 TDP 205 W (table)');
    assert.equal(d.coefficients.cpu_watts_per_core, (205 * 2) / 128);
    const p = await meter.probe();
    assert.equal(p.available && p.detail, `estimate: Intel Xeon Gold 6338 TDP 205 W (table): CPU time × ${(205 * 2) / 128} W per busy core`);
  });

  it('matches by tokens, the longest entry first; a suffix is a different part, a bare family matches nothing', () => {
    assert.equal(matchTdp('AMD EPYC 7742 64-Core Processor')?.name, 'AMD EPYC 7742');
    assert.equal(matchTdp('Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz')?.tdp_w, 205);
    assert.equal(matchTdp('Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz')?.tdp_w, 150);
    assert.equal(matchTdp('13th Gen Intel(R) Core(TM) i9-13900K')?.name, 'Intel Core i9-13900K');
    assert.equal(matchTdp('AMD Ryzen 7 5800X3D 8-Core Processor'), null, '5800X3D is not the 5800X');
    assert.equal(matchTdp('AMD EPYC'), null, 'a family name alone must not pick a model');
  });

  it('no match: the flat figure, saying which model found no TDP; no cpuinfo: model unknown', async () => {
    const root = fakeRoot('Some Vendor Mystery CPU 9000', 4);
    const d = (await createMeter('estimate', { cpu_root: root })).describe() as Described;
    assert.equal(d.cpu_coefficient.label, `estimate: flat ${DEFAULT_CPU_WATTS_PER_CORE} W/core (no TDP match for "Some Vendor Mystery CPU 9000")`);
    assert.equal(d.coefficients.cpu_watts_per_core, DEFAULT_CPU_WATTS_PER_CORE);
    assert.equal(cpuCoefficient(readCpuInfo(join(root, 'nowhere')), 10).label, 'estimate: flat 10 W/core (CPU model unknown)');
    assert.equal(cpuCoefficient(readCpuInfo(fakeRoot(null, 2)), 10).label, 'estimate: flat 10 W/core (CPU model unknown)');
  });

  it('a configured coefficient wins over the table and says so', async () => {
    const root = fakeRoot('AMD EPYC 7742 64-Core Processor', 128);
    const d = (await createMeter('estimate', { cpu_root: root, cpu_watts_per_core: 4 })).describe() as Described;
    assert.equal(d.cpu_coefficient.label, 'estimate: 4 W/core (configured)');
  });

  it('CLI: `meter --meter estimate` reads $JOULEBENCH_CPU_ROOT/proc/cpuinfo and prints the label', async () => {
    const root = fakeRoot('AMD EPYC 7742 64-Core Processor', 128);
    const r = await cli(['meter', '--meter', 'estimate', '--no-idle', '--json', '--', 'true'], { env: { JOULEBENCH_CPU_ROOT: root } });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { meter_detail: Described };
    assert.equal(out.meter_detail.cpu_coefficient.label, 'estimate: AMD EPYC 7742 TDP 225 W (table)');
    const text = await cli(['meter', '--meter', 'estimate', '--no-idle', '--', 'true'], { env: { JOULEBENCH_CPU_ROOT: root } });
    assert.match(text.stderr, /estimate: AMD EPYC 7742 TDP 225 W \(table\)/);
  });
});
