import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { scrubEnv } from '../../src/code/env.js';
import { createNullMeter } from '../../src/code/energy.js';
import { runCodeSuite } from '../../src/code/run.js';
import { resolveSandbox } from '../../src/code/sandbox.js';
import { createSolvers } from '../../src/code/solvers/registry.js';
import { loadCodeSuite } from '../../src/code/task.js';
import { tempDir } from './helpers.js';

const tmp = tempDir();
after(() => rmSync(tmp, { recursive: true, force: true }));

test('the whole smoke suite: reference resolves every task, noop resolves none, nothing invalid or escaped', async () => {
  const suite = loadCodeSuite('smoke');
  const results = await runCodeSuite({
    suite,
    solvers: createSolvers(['reference', 'noop']),
    rollouts: 1,
    meter: createNullMeter(),
    sandbox: resolveSandbox('auto'),
    env: scrubEnv(process.env).env,
    tmp_base: tmp,
  });
  const [ref, noop] = results.solvers;
  const failed = results.datapoints.filter((d) => d.solver === 'reference' && !d.resolved).map((d) => d.task);
  assert.deepEqual(failed, [], 'reference must resolve every smoke task');
  assert.equal(ref?.resolution_pct, 100);
  assert.equal(ref?.resolved_count, suite.tasks.length);
  assert.equal(noop?.resolved_count, 0);
  assert.equal(results.datapoints.filter((d) => !d.valid).length, 0);
  assert.equal(results.datapoints.filter((d) => d.escapes.length > 0).length, 0);
  // Neither writes a test: no task shows edited tests (hidden-test tasks included).
  assert.deepEqual(results.datapoints.filter((d) => d.tests_modified.length > 0).map((d) => `${d.solver}:${d.task}`), []);
  // Every fixed tree's tests are reported by name.
  assert.ok(results.datapoints.filter((d) => d.solver === 'reference').every((d) => Object.keys(d.grade?.reported ?? {}).length > 0), 'each fixed grade names its tests');
  // Each datapoint keeps the solver's diff (SWE-bench's model_patch): the reference's fix, nothing from noop.
  for (const d of results.datapoints) {
    if (d.solver === 'noop') assert.equal(d.diff, '', `${d.task}: noop changed nothing`);
    else assert.ok(d.diff?.startsWith('diff --git ') && d.diff_bytes === Buffer.byteLength(d.diff), `${d.task}: ${d.diff_error ?? d.diff}`);
  }
  // No meter reads here: joules are null, never 0.
  assert.equal(ref?.total_joules, null);
  assert.ok(results.datapoints.every((d) => d.joules === null));
});
