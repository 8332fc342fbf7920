import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { NVML_ERROR_NOT_SUPPORTED, NvmlError, type NvmlBinding } from '../../src/meters/nvml/binding.js';
import { createNvmlMeter } from '../../src/meters/nvml/index.js';
import { visibleDevices } from '../../src/meters/nvml/visible.js';
import { meterContract } from './contract.js';

interface FakeGpu {
  uuid: string;
  name: string;
  /** Total energy, mJ; `'unsupported'` makes the call return NVML_ERROR_NOT_SUPPORTED (pre-Volta). */
  energy_mj: number | 'unsupported';
  power_mw: number;
}

/** A fake NVML with the real library's calling pattern: handles by index, codes as NvmlError. */
function fakeNvml(gpus: FakeGpu[], opts: { initError?: number } = {}) {
  const calls: string[] = [];
  const dev = (d: unknown): FakeGpu => gpus[d as number]!;
  const binding: NvmlBinding = {
    init: () => {
      calls.push('init');
      if (opts.initError !== undefined) throw new NvmlError(opts.initError, `nvmlInit_v2: Driver Not Loaded (NVML return ${opts.initError})`);
    },
    shutdown: () => void calls.push('shutdown'),
    deviceCount: () => gpus.length,
    handleByIndex: (i) => i,
    uuid: (d) => dev(d).uuid,
    name: (d) => dev(d).name,
    totalEnergy_mj: (d) => {
      const e = dev(d).energy_mj;
      if (e === 'unsupported') throw new NvmlError(NVML_ERROR_NOT_SUPPORTED, 'Not Supported');
      return e;
    },
    power_mw: (d) => dev(d).power_mw,
  };
  return { binding, calls, gpus };
}

const TWO_GPUS = (): FakeGpu[] => [
  { uuid: 'GPU-aaaa1111-0000', name: 'NVIDIA H100', energy_mj: 1_000_000, power_mw: 100_000 },
  { uuid: 'GPU-bbbb2222-0000', name: 'NVIDIA H100', energy_mj: 5_000_000, power_mw: 100_000 },
];

describe('nvml: the energy counter', () => {
  it('reads each visible GPU at the window edges, mJ → J, labelled nvml per GPU', async () => {
    const f = fakeNvml(TWO_GPUS());
    const meter = createNvmlMeter({ binding: f.binding });
    const p = await meter.probe();
    assert.ok(p.available);
    const w = await meter.start();
    (f.gpus[0]!.energy_mj as number) += 12_500;
    (f.gpus[1]!.energy_mj as number) += 2_000;
    const r = await w.stop();
    assert.deepEqual(r.by_domain, { 'gpu-0': { joules: 12.5, source: 'nvml' }, 'gpu-1': { joules: 2, source: 'nvml' } });
    assert.equal(r.joules, 14.5);
    assert.equal(r.source, 'nvml');
    await meter.close?.();
    assert.deepEqual(f.calls, ['init', 'shutdown']);
  });

  it('flags windows under the ~100 ms counter refresh as below_floor (injected clock)', async () => {
    let t = 0;
    const meter = createNvmlMeter({ binding: fakeNvml(TWO_GPUS()).binding, now: () => t });
    assert.equal(meter.floor_ms, 100);
    let w = await meter.start();
    t += 50;
    assert.equal((await w.stop()).below_floor, true);
    w = await meter.start();
    t += 100;
    assert.equal((await w.stop()).below_floor, false);
  });
});

describe('nvml: integrated power where the counter is unsupported', () => {
  it('integrates sampled power (trapezoids), labelled integrated-power', async () => {
    let t = 0;
    const f = fakeNvml([{ uuid: 'GPU-old', name: 'Tesla P100', energy_mj: 'unsupported', power_mw: 100_000 }]);
    const meter = createNvmlMeter({ binding: f.binding, now: () => t, poll_ms: 1_000_000 });
    assert.ok((await meter.probe()).available);
    const w = await meter.start(); // sample: 100 W at t=0
    t = 1000;
    f.gpus[0]!.power_mw = 300_000;
    const inner = await meter.start(); // sample: 300 W at t=1 s → 200 J so far
    t = 2000;
    await inner.stop(); // sample: 300 W at t=2 s → +300 J
    const r = await w.stop();
    assert.equal(r.joules, 500);
    assert.equal(r.source, 'integrated-power');
    assert.deepEqual(r.by_domain, { 'gpu-0': { joules: 500, source: 'integrated-power' } });
  });

  it('samples in the background while a window is open', async () => {
    const f = fakeNvml([{ uuid: 'GPU-old', name: 'Tesla P100', energy_mj: 'unsupported', power_mw: 50_000 }]);
    const meter = createNvmlMeter({ binding: f.binding, poll_ms: 5 });
    const w = await meter.start();
    await sleep(60);
    const r = await w.stop();
    // 50 W held constant: the integral is 50 W × the window, whatever the number of samples.
    assert.ok(r.joules !== null && Math.abs(r.joules - (50 * r.window_ms) / 1000) < 0.5, `${r.joules} J over ${r.window_ms} ms`);
    await meter.close?.();
  });

  it('one GPU with the counter and one without: each domain labelled, the total says mixed', async () => {
    const f = fakeNvml([
      { uuid: 'GPU-new', name: 'A100', energy_mj: 0, power_mw: 1 },
      { uuid: 'GPU-old', name: 'P100', energy_mj: 'unsupported', power_mw: 0 },
    ]);
    const meter = createNvmlMeter({ binding: f.binding, poll_ms: 1_000_000 });
    const w = await meter.start();
    f.gpus[0]!.energy_mj = 3000;
    const r = await w.stop();
    assert.equal(r.source, 'mixed');
    assert.equal(r.by_domain['gpu-0']?.source, 'nvml');
    assert.equal(r.by_domain['gpu-1']?.source, 'integrated-power');
    const d = meter.describe() as { domains: { source: string }[] };
    assert.deepEqual(d.domains.map((x) => x.source), ['nvml', 'integrated-power']);
  });
});

describe('nvml: CUDA_VISIBLE_DEVICES', () => {
  const uuids = ['GPU-aaaa1111-0000', 'GPU-bbbb2222-0000', 'GPU-cccc3333-0000'];
  it('unset: every device; empty: none', () => {
    assert.deepEqual(visibleDevices(undefined, uuids).indices, [0, 1, 2]);
    assert.deepEqual(visibleDevices('', uuids).indices, []);
  });
  it('indices and UUID prefixes, in the order given', () => {
    assert.deepEqual(visibleDevices('2,0', uuids).indices, [2, 0]);
    assert.deepEqual(visibleDevices('GPU-bbbb', uuids).indices, [1]);
    assert.deepEqual(visibleDevices(' 1 , GPU-cccc3333-0000', uuids).indices, [1, 2]);
  });
  it('stops at the first entry that names no device, as CUDA does', () => {
    assert.deepEqual(visibleDevices('0,7,1', uuids), { indices: [0], ignored: ['7', '1'] });
    assert.deepEqual(visibleDevices('-1', uuids).indices, []);
    assert.deepEqual(visibleDevices('GPU-', uuids).indices, [], 'an ambiguous prefix names no device');
  });
  it('the meter reads only the visible GPUs, under their NVML index', async () => {
    const f = fakeNvml(TWO_GPUS());
    const meter = createNvmlMeter({ binding: f.binding, cuda_visible_devices: '1' });
    const w = await meter.start();
    (f.gpus[0]!.energy_mj as number) += 9_000;
    (f.gpus[1]!.energy_mj as number) += 1_000;
    const r = await w.stop();
    assert.deepEqual(Object.keys(r.by_domain), ['gpu-1']);
    assert.equal(r.joules, 1);
  });
  it('nothing visible: unavailable, quoting the variable', async () => {
    const p = await createNvmlMeter({ binding: fakeNvml(TWO_GPUS()).binding, cuda_visible_devices: '' }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /no GPU visible \(CUDA_VISIBLE_DEVICES=""\)/);
  });
});

describe('nvml: when it cannot read', () => {
  it('init fails: unavailable with NVML’s message', async () => {
    const p = await createNvmlMeter({ binding: fakeNvml(TWO_GPUS(), { initError: 9 }).binding }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /Driver Not Loaded/);
  });
  it('the library does not load: unavailable, with the fix', async () => {
    const p = await createNvmlMeter({
      binding: async () => {
        throw new Error('libnvidia-ml.so.1: cannot open shared object file: No such file or directory');
      },
    }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : `${p.reason} ${p.fix}`, /cannot load libnvidia-ml\.so\.1.*NVIDIA driver/);
  });
  it('koffi and NVML are loaded lazily: no native module is opened by probing auto on a machine without a driver', () => {
    // Static: nothing on the import path of the registry imports koffi at module level.
    for (const f of ['src/meters/registry.ts', 'src/meters/nvml/index.ts', 'src/meters/auto.ts']) {
      assert.doesNotMatch(readFileSync(f, 'utf8'), /^import .*['"]koffi['"]/m, f);
    }
    assert.match(readFileSync('src/meters/nvml/binding.ts', 'utf8'), /await import\('koffi'\)/);
    // Dynamic, where this machine has no NVIDIA driver: count native modules opened while auto probes.
    if (existsSync('/proc/driver/nvidia/version') || existsSync('/dev/nvidiactl')) return;
    const code = `const opened = []; const dl = process.dlopen;
      process.dlopen = (m, f, ...rest) => { opened.push(f); return dl.call(process, m, f, ...rest); };
      const { createMeter } = await import('./src/meters/registry.ts');
      const m = await createMeter('auto', { powercap_root: '/nonexistent' });
      await m.probe(); const before = [...opened];
      await import('koffi'); // the control: loading koffi does show up in the hook
      console.log(JSON.stringify({ opened: before, control: opened.slice(before.length), id: m.id }));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { opened: string[]; control: string[]; id: string };
    assert.deepEqual(out.opened.filter((f) => /koffi/.test(f)), []);
    assert.ok(out.control.some((f) => /koffi/.test(f)), `the dlopen hook saw no koffi load: ${JSON.stringify(out.control)}`);
    assert.equal(out.id, 'auto(model)');
  });
});

// The contract, with a fake binding whose counters advance as work is done (300 W per GPU).
meterContract('nvml (injected binding)', async () => {
  const f = fakeNvml(TWO_GPUS());
  return {
    meter: createNvmlMeter({ binding: f.binding }),
    async work(ms) {
      await sleep(ms);
      for (const g of f.gpus) (g.energy_mj as number) += 300 * ms;
    },
  };
});

meterContract('nvml integrated power (injected binding)', async () => {
  const f = fakeNvml([{ uuid: 'GPU-old', name: 'P100', energy_mj: 'unsupported', power_mw: 120_000 }]);
  return { meter: createNvmlMeter({ binding: f.binding, poll_ms: 5 }) };
});
