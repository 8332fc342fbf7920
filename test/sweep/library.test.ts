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

it('joulebench sweep: SIGINT names the folder to resume, exits 130, and --resume finishes it', async () => {
  const { spawn } = await import('node:child_process');
  const { BIN, cli } = await import('../helpers/cli.js');
  const plan = join(dir, 'int.yaml');
  // Many scored passes so the signal lands mid-run.
  writeFileSync(plan, 'name: int\nsuites: [router]\narms:\n  - { name: a, kind: cascade, meter: model, repeat: 400 }\n  - { name: b, kind: cascade, meter: model }\n');
  const out = join(dir, 'int');
  const child = spawn(process.execPath, [BIN, 'sweep', plan, '--out-dir', out, '--no-idle', '--no-history', '--bootstrap', '50', '-q'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((ok) => child.on('exit', (c) => ok(c)));
  const { existsSync, statSync } = await import('node:fs');
  const results = join(out, 'a', 'router.results.jsonl');
  while (!existsSync(results) || statSync(results).size < 20_000) await new Promise((ok) => setTimeout(ok, 5));
  child.kill('SIGINT');
  assert.equal(await exited, 130);
  assert.match(stderr, new RegExp(`continue it with: joulebench sweep --resume ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const r = await cli(['sweep', '--resume', out, '--no-idle', '--no-history', '--bootstrap', '50', '-q']);
  assert.equal(r.code, 0, r.stderr);
  const { readResultsFile } = await import('../../src/runner/results-stream.js');
  const keys = readResultsFile(results).results.map((x) => `${x.phase}:${x.pass}:${x.index}`);
  assert.equal(keys.length, 30 * 401);
  assert.equal(new Set(keys).size, keys.length);
});
