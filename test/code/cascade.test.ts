import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { Meter } from '../../src/meters/meter.js';
import { runCodeSuite } from '../../src/code/run.js';
import { noSandbox } from '../../src/code/sandbox.js';
import { createSolvers } from '../../src/code/solvers/registry.js';
import { loadCodeSuite } from '../../src/code/task.js';
import { tempDir, writeShellTask } from './helpers.js';

const tmp = tempDir('jb-cascade-');
after(() => rmSync(tmp, { recursive: true, force: true }));

/** 20 J per second of window: energy follows the work done, as a real counter's would. */
const timeMeter: Meter = {
  id: 'time',
  source: 'rapl',
  floor_ms: 0,
  probe: async () => ({ available: true }),
  async start() {
    const t0 = performance.now();
    return {
      stop: async () => {
        const window_ms = performance.now() - t0;
        return { joules: (window_ms / 1000) * 20, source: 'rapl', by_domain: {}, window_ms, below_floor: false };
      },
    };
  },
  describe: () => ({ meter: 'time' }),
};

// A slow, paid agent: 0.4 s of work and $0.50 per call, reported the way Claude Code does.
const agent = `cmd:sleep 0.4; echo fixed > src/value.txt; echo '{"type":"result","total_cost_usd":0.5}'`;

test('cascade: repeats replay the stored fix: $ and J per resolved fall, and the frontier places it', async () => {
  const suiteDir = join(tmp, 'suite');
  // Two tasks with the same prompt and before/ tree: a suite with a repeat.
  writeShellTask(suiteDir, { name: 'a' });
  writeShellTask(suiteDir, { name: 'b' });
  const cache = join(tmp, 'cache');
  const solvers = createSolvers([`plain=${agent}`, `cached=cascade:${agent}`], { cache_dir: cache });
  const r = await runCodeSuite({ suite: loadCodeSuite(suiteDir), solvers, rollouts: 3, meter: timeMeter, sandbox: noSandbox(), env: { PATH: process.env.PATH }, tmp_base: tmp });
  const cached = r.datapoints.filter((d) => d.solver === 'cached');
  assert.deepEqual(cached.map((d) => d.cache), ['miss', 'hit', 'hit', 'hit', 'hit', 'hit']);
  assert.ok(cached.every((d) => d.resolved));
  assert.deepEqual(cached.map((d) => d.cost_usd), [0.5, 0, 0, 0, 0, 0]);
  // The hits did no agent work: far less energy than the miss.
  for (const d of cached.slice(1)) assert.ok((d.joules ?? Infinity) < (cached[0]!.joules ?? 0) / 4, `hit ${d.joules} J vs miss ${cached[0]!.joules} J`);
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.json')).length, 1, 'one entry for the one distinct task');

  const plain = r.solvers.find((s) => s.solver === 'plain')!;
  const casc = r.solvers.find((s) => s.solver === 'cached')!;
  assert.equal(plain.resolution_pct, 100);
  assert.equal(casc.resolution_pct, 100);
  assert.equal(plain.usd_per_resolved, 1.5);
  assert.equal(casc.usd_per_resolved, 0.25);
  assert.ok(casc.joules_per_resolved! < plain.joules_per_resolved! / 3, `${casc.joules_per_resolved} vs ${plain.joules_per_resolved}`);
  assert.equal(casc.pareto_usd, true);
  assert.equal(casc.pareto_energy, true);
  assert.equal(plain.pareto_usd, false);

  // A later run finds the cache: every datapoint is a hit.
  const again = await runCodeSuite({ suite: loadCodeSuite(suiteDir, ['a']), solvers: createSolvers([`cascade:${agent}`], { cache_dir: cache }), rollouts: 1, meter: timeMeter, sandbox: noSandbox(), env: { PATH: process.env.PATH }, tmp_base: tmp });
  assert.equal(again.datapoints[0]?.cache, 'hit');
  assert.equal(again.datapoints[0]?.resolved, true);
});

test('cascade: an unresolved attempt stores nothing, so the next one runs the solver again', async () => {
  const suiteDir = join(tmp, 'suite-miss');
  writeShellTask(suiteDir, { name: 'c', toml: 'name = "c"\nprompt = "another prompt"\ntest_cmd = "sh test/check.sh"\ntest_format = "tap"\ntest_files = ["test/check.sh"]' });
  const cache = join(tmp, 'cache-miss');
  const r = await runCodeSuite({ suite: loadCodeSuite(suiteDir), solvers: createSolvers(['cascade:noop'], { cache_dir: cache }), rollouts: 2, meter: timeMeter, sandbox: noSandbox(), env: { PATH: process.env.PATH }, tmp_base: tmp });
  assert.deepEqual(r.datapoints.map((d) => [d.cache, d.resolved]), [['miss', false], ['miss', false]]);
});

test('cascade: one solver\'s stored fixes are never replayed for another; a hit names where its fix came from', async () => {
  const suiteDir = join(tmp, 'suite-scope');
  writeShellTask(suiteDir, { name: 's1' });
  writeShellTask(suiteDir, { name: 's2', toml: 'name = "s2"\nprompt = "a second prompt"\ntest_cmd = "sh test/check.sh"\ntest_format = "tap"\ntest_files = ["test/check.sh"]' });
  const cache = join(tmp, 'cache-scope');
  const run = (spec: string, run_id: string) =>
    runCodeSuite({ suite: loadCodeSuite(suiteDir), solvers: createSolvers([spec], { cache_dir: cache }), rollouts: 1, meter: timeMeter, sandbox: noSandbox(), env: { PATH: process.env.PATH }, tmp_base: tmp, run_id });
  const ref = await run('cascade:reference', 'run-ref');
  assert.deepEqual(ref.datapoints.map((d) => [d.cache, d.resolved]), [['miss', true], ['miss', true]]);
  const noop = await run('cascade:noop', 'run-noop');
  assert.deepEqual(noop.datapoints.map((d) => [d.cache, d.resolved]), [['miss', false], ['miss', false]], 'noop must not borrow reference\'s fixes');
  const again = await run('cascade:reference', 'run-again');
  assert.deepEqual(again.datapoints.map((d) => [d.cache, d.resolved]), [['hit', true], ['hit', true]], 'the same solver still shares across runs');
  assert.equal(again.datapoints[0]?.cache_origin?.solver, 'reference');
  assert.equal(again.datapoints[0]?.cache_origin?.run_id, 'run-ref');
  assert.equal(again.datapoints[0]?.cache_origin?.task, 's1');
});
