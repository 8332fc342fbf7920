import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createAutoMeter } from '../../src/meters/auto.js';
import { combineReadings, createCompositeMeter } from '../../src/meters/composite.js';
import { createEstimateMeter } from '../../src/meters/estimate.js';
import { NvmlError, type NvmlBinding } from '../../src/meters/nvml/binding.js';
import { createNvmlMeter } from '../../src/meters/nvml/index.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { createMeter } from '../../src/meters/registry.js';
import { meterContract } from './contract.js';
import { scriptedMeter } from './fake-meter.js';
import { INTEL_ONE_PACKAGE, setEnergy, writePowercapTree } from './powercap-tree.js';

/** One fake GPU whose counter the test moves. */
function oneGpu(): { binding: NvmlBinding; gpu: { energy_mj: number } } {
  const gpu = { energy_mj: 0 };
  return {
    gpu,
    binding: {
      init() {},
      shutdown() {},
      deviceCount: () => 1,
      handleByIndex: (i) => i,
      uuid: () => 'GPU-1234',
      name: () => 'Fake GPU',
      totalEnergy_mj: () => gpu.energy_mj,
      power_mw: () => 0,
    },
  };
}

describe('composite: CPU and GPU domains in one window', () => {
  it('each domain keeps its label; the total is labelled composite', async () => {
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    const g = oneGpu();
    const meter = createCompositeMeter([createRaplMeter({ root: tree.root, poll_ms: 1_000_000 }), createNvmlMeter({ binding: g.binding })]);
    try {
      assert.equal(meter.id, 'rapl+nvml');
      assert.ok((await meter.probe()).available);
      assert.equal(meter.floor_ms, 100, 'the floor of a composite is its slowest part');
      const w = await meter.start();
      setEnergy(tree.root, 'intel-rapl:0', 4_000_000);
      g.gpu.energy_mj += 6_000;
      const r = await w.stop();
      assert.deepEqual(r.by_domain, { 'package-0': { joules: 4, source: 'rapl' }, 'gpu-0': { joules: 6, source: 'nvml' } });
      assert.equal(r.joules, 10);
      assert.equal(r.source, 'composite');
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it('a part that cannot say makes the total null (never a partial sum passed off as whole)', () => {
    const r = combineReadings(
      [
        { joules: 2, source: 'rapl', by_domain: { 'package-0': { joules: 2, source: 'rapl' } }, window_ms: 5, below_floor: false },
        { joules: null, source: 'nvml', by_domain: { 'gpu-0': { joules: null, source: 'nvml' } }, window_ms: 6, below_floor: true, warnings: ['x'] },
      ],
      ['rapl', 'nvml'],
    );
    assert.equal(r.joules, null);
    assert.equal(r.below_floor, true);
    assert.equal(r.window_ms, 6);
    assert.deepEqual(r.warnings, ['nvml: x']);
  });

  it('domain names two parts share are told apart by their part', () => {
    const one = { joules: 1, source: 'estimate' as const, by_domain: { cpu: { joules: 1, source: 'estimate' as const } }, window_ms: 1, below_floor: false };
    assert.deepEqual(Object.keys(combineReadings([one, one], ['a', 'b']).by_domain), ['cpu', 'b:cpu']);
  });

  it('unavailable when any part is, listing each reason', async () => {
    const p = await createMeter('composite', { powercap_root: '/nonexistent-powercap', nvml_binding: oneGpu().binding }).then((m) => m.probe());
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /^rapl: no powercap tree/);
  });
});

describe('auto', () => {
  it('RAPL readable: auto(rapl), idle-calibrated (not marginal)', async () => {
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    const meter = await createMeter('auto', { powercap_root: tree.root, nvml_binding: async () => Promise.reject(new Error('no lib')) });
    try {
      assert.ok((await meter.probe()).available);
      assert.equal(meter.id, 'auto(rapl)');
      assert.equal(meter.source, 'rapl');
      assert.equal(meter.marginal, false);
      assert.equal(meter.usesTargetEnergy, false);
      const d = meter.describe() as { tried: Record<string, { available: boolean }> };
      assert.equal(d.tried.rapl?.available, true);
      assert.equal(d.tried.nvml?.available, false);
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it('RAPL and NVML: auto(rapl+nvml), both domains labelled', async () => {
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    const g = oneGpu();
    const meter = await createMeter('auto', { powercap_root: tree.root, nvml_binding: g.binding });
    try {
      await meter.probe();
      assert.equal(meter.id, 'auto(rapl+nvml)');
      const w = await meter.start();
      g.gpu.energy_mj += 1000;
      setEnergy(tree.root, 'intel-rapl:0', 1_000_000);
      const r = await w.stop();
      assert.equal(r.source, 'composite');
      assert.equal(r.joules, 2);
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it("no counter reads: the target's own energy (model, null where it reports none), never the estimate; the probe says why", async () => {
    const meter = await createMeter('auto', {
      powercap_root: '/nonexistent-powercap',
      nvml_binding: () => Promise.reject(new NvmlError(9, 'Driver Not Loaded')),
    });
    const p = await meter.probe();
    assert.ok(p.available);
    assert.match(p.available ? (p.detail ?? '') : '', /no hardware counter reads \(rapl: no powercap tree .*; nvml: cannot load .*Driver Not Loaded; amdsmi: .+\)/);
    assert.equal(meter.id, 'auto(model)');
    assert.equal(meter.usesTargetEnergy, true, 'the runner takes the target energy and opens no window');
    assert.equal(meter.source, 'model');
    assert.equal(meter.marginal, true);
    const r = await (await meter.start()).stop();
    assert.equal(r.joules, null, 'a window measures nothing: no estimate of this process');
  });

  it('for a bare command (no target): auto(estimate)', async () => {
    const meter = await createMeter('auto', { powercap_root: '/nonexistent-powercap', auto_fallback: 'estimate', nvml_binding: () => Promise.reject(new Error('none')) });
    await meter.probe();
    assert.equal(meter.id, 'auto(estimate)');
    assert.equal(meter.usesTargetEnergy, false);
    assert.equal(meter.source, 'estimate');
  });

  it('an unreadable counter is never silently replaced by an estimate when asked for by name', async () => {
    const p = await (await createMeter('rapl', { powercap_root: '/nonexistent-powercap' })).probe();
    assert.equal(p.available, false);
  });

  it('resolves once: later probes do not re-probe the hardware', async () => {
    const hw = scriptedMeter([], { id: 'hw', available: false });
    let probes = 0;
    const counted = { ...hw, probe: async () => (probes++, hw.probe()) };
    const auto = createAutoMeter({ hardware: [counted], estimate: createEstimateMeter(), fallback: 'estimate' });
    await auto.probe();
    await auto.probe();
    assert.equal(probes, 1);
  });
});

meterContract('composite (rapl tree + injected nvml)', async () => {
  const tree = writePowercapTree(INTEL_ONE_PACKAGE);
  const g = oneGpu();
  let v = 0;
  return {
    meter: createCompositeMeter([createRaplMeter({ root: tree.root, poll_ms: 5 }), createNvmlMeter({ binding: g.binding })]),
    async work(ms) {
      await sleep(ms);
      v += ms * 1000;
      setEnergy(tree.root, 'intel-rapl:0', v);
      g.gpu.energy_mj += ms;
    },
    cleanup: tree.cleanup,
  };
});

meterContract('auto (no counters: estimate fallback)', async () => ({
  meter: createAutoMeter({ hardware: [scriptedMeter([], { available: false })], estimate: createEstimateMeter(), fallback: 'estimate' }),
}));

describe('meter registry', () => {
  it('a meter name that is only an Object.prototype name is unknown (E_USAGE), not a crash', async () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      await assert.rejects(createMeter(name), (e: Error & { code?: string }) => e.code === 'E_USAGE' && /unknown meter/.test(e.message), name);
    }
  });
});
