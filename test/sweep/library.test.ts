import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { compareSweep, loadSweep, sweep } from '../../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-sweep-lib-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('sweep() from the library: parallel arms are marked shared, events reach the hooks, nothing printed', async () => {
  const plan = join(dir, 'p.yaml');
  writeFileSync(plan, 'name: lib\nsuites: [router]\nbaseline: a\narms:\n  - { name: a, kind: cascade, meter: model }\n  - { name: b, kind: cascade, meter: model, cache_capacity: 2 }\n');
  const events: string[] = [];
  const { dir: out, state } = await sweep(plan, { out_dir: join(dir, 'out'), parallel_arms: 2, history: false, idle_ms: 0, bootstrap: 200 }, { onRun: (e, ev) => events.push(`${ev} ${e.arm}`) });
  assert.deepEqual(events.filter((e) => e.startsWith('done')).sort(), ['done a', 'done b']);
  assert.deepEqual(state.runs.map((r) => r.status), ['done', 'done']);
  for (const arm of ['a', 'b']) {
    const report = JSON.parse(readFileSync(join(out, arm, 'router.json'), 'utf8'));
    assert.equal(report.energy_attribution, 'shared');
  }
  const c = compareSweep(loadSweep(out));
  assert.equal(c.suites[0]!.arms.length, 2);
  assert.equal(c.suites[0]!.baseline, 'a');
  assert.equal(c.suites[0]!.vs_baseline[0]!.arm, 'b');
  // Starting a second sweep in the same folder is refused (resume it instead).
  await assert.rejects(sweep(plan, { out_dir: out, history: false }), /already holds a sweep: continue it with --resume/);
});
