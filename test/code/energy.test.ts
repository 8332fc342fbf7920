import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { chooseCodeMeter, createNullMeter } from '../../src/code/energy.js';
import { runCodeSuite } from '../../src/code/run.js';
import { noSandbox } from '../../src/code/sandbox.js';
import { createSolvers } from '../../src/code/solvers/registry.js';
import { loadCodeSuite } from '../../src/code/task.js';
import { isJoulebenchError } from '../../src/core/errors.js';
import { writePowercapTree } from '../meters/powercap-tree.js';
import { fakeMeter, tempDir, writeShellTask } from './helpers.js';

const tmp = tempDir();
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('energy for coding runs', () => {
  test('the null meter reads null joules, never 0', async () => {
    const w = await createNullMeter().start();
    const r = await w.stop();
    assert.equal(r.joules, null);
    assert.equal(r.source, 'none');
    assert.equal(r.below_floor, false);
  });

  test('auto takes a hardware counter when one reads, else none (never the estimate); model is refused', async () => {
    const empty = join(tmp, 'no-powercap');
    mkdirSync(empty);
    const none = await chooseCodeMeter('auto', { powercap_root: empty, nvml_binding: async () => { throw new Error('no NVML in this test'); } });
    assert.equal(none.meter.id, 'none');
    assert.match(none.tried[0]?.result ?? '', /no hardware counter/);
    const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1000 }]);
    try {
      const rapl = await chooseCodeMeter('auto', { powercap_root: tree.root, nvml_binding: async () => { throw new Error('no NVML in this test'); } });
      assert.equal(rapl.meter.source, 'rapl');
      await rapl.meter.close?.();
    } finally {
      tree.cleanup();
    }
    const est = await chooseCodeMeter('estimate');
    assert.equal(est.meter.source, 'estimate', 'asked for by name, the estimate is used, labelled');
    await est.meter.close?.();
    assert.equal((await chooseCodeMeter('none')).meter.id, 'none');
    await assert.rejects(chooseCodeMeter('model'), (e) => isJoulebenchError(e) && e.exitCode === 2);
    await assert.rejects(chooseCodeMeter('no-such-meter'), (e) => isJoulebenchError(e) && /unknown meter/.test(e.message));
  });

  test('a run with a measuring meter: idle calibrated first, energy per datapoint, rollouts summed, ~ flagged', async () => {
    const suiteDir = join(tmp, 'suite');
    writeShellTask(suiteDir, { name: 'one' });
    // The idle window (the first) is long enough and reads little, so every datapoint's net is above idle
    // (a net below idle × wall is null, and the solver would fall back to gross).
    const meter = fakeMeter((n) => (n === 1 ? 0.001 : 3), { below_floor: (n) => n > 1 });
    const res = await runCodeSuite({
      suite: loadCodeSuite(suiteDir),
      solvers: createSolvers(['reference', 'noop']),
      rollouts: 2,
      meter,
      sandbox: noSandbox(),
      env: { PATH: process.env.PATH },
      tmp_base: tmp,
      idle_ms: 20,
    });
    assert.equal(meter.windows, 1 + 4, 'one idle window, then one per datapoint');
    assert.equal(res.config.idle?.status, 'measured');
    assert.ok(res.config.idle.watts !== null && res.config.idle.watts > 0);
    const ref = res.solvers[0]!;
    assert.equal(ref.energy_basis, 'net');
    assert.equal(ref.below_floor, true);
    assert.equal(ref.below_floor_count, 2);
    const gross = res.datapoints.filter((d) => d.solver === 'reference').map((d) => d.joules);
    assert.deepEqual(gross, [3, 3]);
    const net = res.datapoints.filter((d) => d.solver === 'reference').reduce((a, d) => a + (d.net_joules ?? NaN), 0);
    assert.ok(Math.abs((ref.total_joules ?? NaN) - net) < 1e-6);
    assert.equal(ref.joules_per_resolved, ref.total_joules);
    assert.equal(res.solvers[1]!.joules_per_resolved, null, 'noop resolved nothing: J/resolved is null, not infinite');
  });
});
