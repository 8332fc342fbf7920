import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Case, Stage, StageResult, Suite } from '../../src/core/types.js';
import { createModelMeter } from '../../src/meters/model.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { run } from '../../src/runner/run.js';
import { Cascade } from '../../src/targets/cascade/cascade.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

/**
 * Per-stage energy measured by a real meter: RAPL over a powercap tree the test writes. A `store` stage
 * answers `hit*` prompts at once (far below RAPL's 1 ms floor); a `slow` stage takes 20 ms, advances the
 * package counter by 2 J and bills $0.01 a case.
 */
const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }]);
after(() => tree.cleanup());
let counter_uj = 0;

const store: Stage = {
  id: 'cache',
  tryAnswer: (p): StageResult => ({ text: p.startsWith('hit') ? 'a' : null, energy_uj: 5 }),
  describe: () => ({ id: 'cache' }),
};
const slow: Stage = {
  id: 'neural',
  async tryAnswer(): Promise<StageResult> {
    await sleep(20);
    setEnergy(tree.root, 'intel-rapl:0', (counter_uj += 2_000_000));
    return { text: 'a', energy_uj: 700, meta: { cost_usd: 0.01 } };
  },
  describe: () => ({ id: 'neural' }),
};

function suite(prompts: string[]): Suite {
  const cases: Case[] = prompts.map((p, i) => ({ id: `c${i}`, prompt: p, expected: 'a', dataset: 'toy', weight: 1, tags: [] }));
  return { name: 'toy', version: '1', scorer: 'substring', cases, source: 'test' };
}

describe('cascade stage energy: measured where the meter resolves it', () => {
  it('a stage whose cases were all metered above the floor is measured; the sub-floor stage keeps the model', async () => {
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
    const { report } = await run({ suite: suite(['hit-1', 'miss-1', 'hit-2', 'miss-2']), target: new Cascade('two', [store, slow]), meter, idle_ms: 0 });
    await meter.close?.();
    // neural: the meter's 2 J per case; cache: its modelled 5 µJ × the 2 cases it resolved (the 2 it passed on are inside neural's readings).
    assert.equal(report.stage_joules.neural, 4);
    assert.equal(report.stage_joules_basis?.neural, 'measured');
    // A cache window reaches the floor only if the machine stalled a millisecond inside it: then it is metered (and read 0 J).
    if (report.stage_joules_basis?.cache === 'model') {
      assert.equal(report.stage_joules.cache, 10e-6);
      assert.equal(report.stage_joules_source, 'mixed');
    } else assert.deepEqual([report.stage_joules_basis?.cache, report.stage_joules.cache, report.stage_joules_source], ['measured', 0, 'rapl']);
    assert.equal(report.stage_usd_tokens?.neural, 0.02);
    assert.equal(report.stage_usd_tokens?.cache, 0);
  });

  it('under the model meter nothing is measured: the modelled split stays as it was, with no basis field', async () => {
    const { report } = await run({ suite: suite(['hit-1', 'miss-1']), target: new Cascade('two', [store, slow]), meter: createModelMeter(), idle_ms: 0 });
    assert.deepEqual(report.stage_joules, { cache: 10e-6, kv: null, graph: null, neural: 700e-6 });
    assert.equal(report.stage_joules_source, 'model');
    assert.equal(report.stage_joules_basis, undefined);
    assert.deepEqual(report.stage_usd_tokens, { cache: 0, kv: null, graph: null, neural: 0.01 });
  });
});
