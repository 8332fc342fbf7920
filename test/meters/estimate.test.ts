import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChildrenCpuMs, readCpuTimes } from '../../src/meters/cpu-time.js';
import { createEstimateMeter, DEFAULT_CPU_WATTS_PER_CORE } from '../../src/meters/estimate.js';
import { createModelMeter } from '../../src/meters/model.js';
import { meterContract } from './contract.js';

/** A scripted clock and CPU counter. */
function scripted() {
  const s = { t: 0, self_ms: 0, children_ms: 0 as number | null };
  return { s, now: () => s.t, cpuTimes: () => ({ self_ms: s.self_ms, children_ms: s.children_ms }) };
}

describe('estimate', () => {
  it('default: CPU time × 10 W per busy core, labelled estimate, domain cpu', async () => {
    const { s, now, cpuTimes } = scripted();
    const meter = createEstimateMeter({ now, cpuTimes });
    const w = await meter.start();
    s.t += 2000;
    s.self_ms += 300;
    (s.children_ms as number) += 1200; // 1.5 CPU-seconds in all
    const r = await w.stop();
    assert.equal(r.joules, 1.5 * DEFAULT_CPU_WATTS_PER_CORE);
    assert.deepEqual(r.by_domain, { cpu: { joules: 15, source: 'estimate' } });
    assert.equal(r.source, 'estimate');
    assert.equal(meter.marginal, true, 'an estimate is marginal: no idle is subtracted from it');
  });

  it('active watts alone: wall × watts (the seed estimator), the CPU term off', async () => {
    const { s, now, cpuTimes } = scripted();
    const meter = createEstimateMeter({ active_watts: 40, now, cpuTimes });
    const w = await meter.start();
    s.t += 250;
    s.self_ms += 250;
    const r = await w.stop();
    assert.deepEqual(r.by_domain, { active: { joules: 10, source: 'estimate' } });
    assert.equal(r.joules, 10);
  });

  it('both coefficients: two domains, summed; coefficients in describe() for the receipt', async () => {
    const { s, now, cpuTimes } = scripted();
    const meter = createEstimateMeter({ active_watts: 20, cpu_watts_per_core: 5, now, cpuTimes });
    const w = await meter.start();
    s.t += 1000;
    s.self_ms += 2000;
    const r = await w.stop();
    assert.equal(r.by_domain.cpu?.joules, 10);
    assert.equal(r.by_domain.active?.joules, 20);
    assert.equal(r.joules, 30);
    assert.deepEqual((meter.describe() as { coefficients: unknown }).coefficients, { cpu_watts_per_core: 5, active_watts: 20 });
  });

  it('children CPU unknown (no /proc): the own-process part still counts', async () => {
    const { s, now, cpuTimes } = scripted();
    s.children_ms = null;
    const meter = createEstimateMeter({ now, cpuTimes });
    const w = await meter.start();
    s.self_ms += 100;
    s.t += 100;
    assert.equal((await w.stop()).joules, 1);
  });

  it("cpu_scope children (meter -- CMD): only the waited-for children's CPU counts, unknown without /proc", async () => {
    const { s, now, cpuTimes } = scripted();
    const meter = createEstimateMeter({ cpu_scope: 'children', now, cpuTimes });
    const w = await meter.start();
    s.t += 300;
    s.self_ms += 70; // joulebench's own work: not the command's
    (s.children_ms as number) += 200;
    assert.equal((await w.stop()).joules, 2);
    s.children_ms = null;
    const r = await (await meter.start()).stop();
    assert.equal(r.joules, null);
    assert.deepEqual(r.by_domain, { cpu: { joules: null, source: 'estimate' } });
  });

  it('flags windows under 10 ms (CPU accounting ticks)', async () => {
    const { s, now, cpuTimes } = scripted();
    const meter = createEstimateMeter({ now, cpuTimes });
    const w = await meter.start();
    s.t += 4;
    assert.equal((await w.stop()).below_floor, true);
  });

  it('rejects a negative coefficient', () => {
    assert.throws(() => createEstimateMeter({ active_watts: -1 }), /active_watts/);
  });

  it('reads cutime + cstime from a stat line whose command holds spaces and parentheses', () => {
    const line = '1234 (my (weird) cmd) S 1 1234 1234 0 -1 4194560 100 200 0 0 11 22 33 44 20 0 1 0 100 1000 10';
    assert.equal(parseChildrenCpuMs(line), (33 + 44) * 10);
    assert.equal(parseChildrenCpuMs('garbage'), null);
    const now = readCpuTimes();
    assert.ok(now.self_ms > 0);
    assert.ok(now.children_ms === null || now.children_ms >= 0);
  });
});

meterContract('estimate', async () => ({
  meter: createEstimateMeter(),
  async work(ms) {
    const end = performance.now() + ms;
    while (performance.now() < end); // burn CPU so the estimate has something to count
  },
}));

meterContract('model', async () => ({ meter: createModelMeter() }), {
  skip: { 'a window shorter than the floor is flagged': 'model opens no window: energy is what the target reports; floor 0' },
});

describe('model', () => {
  it('opens no window: the runner takes the target’s own energy, labelled model', async () => {
    const m = createModelMeter();
    assert.equal(m.usesTargetEnergy, true);
    assert.equal(m.marginal, true);
    const r = await (await m.start()).stop();
    assert.equal(r.joules, null);
    assert.equal(r.source, 'model');
  });
});
