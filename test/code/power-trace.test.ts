import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCodeSuite } from '../../src/code/run.js';
import { noSandbox } from '../../src/code/sandbox.js';
import { createSolvers } from '../../src/code/solvers/registry.js';
import type { Solver } from '../../src/code/solvers/solver.js';
import { loadCodeSuite } from '../../src/code/task.js';
import { PowerTrace } from '../../src/meters/power-trace.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { MAX_GAP_INTERVALS } from '../../src/meters/validity.js';
import { cli } from '../helpers/cli.js';
import { gapAcross, loggedReads, setEnergy, unreadableFor, writePowercapTree } from '../meters/powercap-tree.js';
import { tempDir, writeShellTask } from './helpers.js';

const tmp = tempDir('jb-code-trace-');
const suiteDir = join(tmp, 'suite');
writeShellTask(suiteDir, { name: 'one' });
const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1_000_000 }]);
const energyPath = join(tree.root, 'intel-rapl:0', 'energy_uj');
after(() => {
  tree.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

let uj = 1_000_000;
/** The counter moves only while a solver runs (≈ 10 W), so the trace and the solver windows read the same energy. */
function burn(): () => void {
  const t = setInterval(() => setEnergy(tree.root, 'intel-rapl:0', (uj += 10_000)), 1);
  return () => clearInterval(t);
}

/** The reference solver, with `during` run beside it. */
function solver(id: string, during: () => Promise<void>): Solver {
  const ref = createSolvers(['reference'])[0]!;
  return { ...ref, id, solve: async (ctx) => (await Promise.all([ref.solve(ctx), during()]))[0] };
}

// Long enough that a busy machine's late poll does not fail a healthy window (4 intervals = 400 ms).
const POLL_MS = 100;

describe('code: power trace, validity and energy layers over a live powercap tree', () => {
  test('idle then scored rows; the trace integrates to the solver windows\' gross joules within 1 %; layers per resolved task, facility modelled', async () => {
    const meter = createRaplMeter({ root: tree.root, poll_ms: POLL_MS });
    const trace = new PowerTrace(meter, 100);
    const burner = solver('burner', async () => {
      const stop = burn();
      await sleep(500);
      stop();
    });
    try {
      const res = await runCodeSuite({ suite: loadCodeSuite(suiteDir), solvers: [burner], rollouts: 2, meter, sandbox: noSandbox(), env: { PATH: process.env.PATH }, idle_ms: 200, pue: 1.5, trace, preflight: false });
      const pt = res.power_trace!;
      assert.deepEqual(pt.domains, ['package-0']);
      assert.deepEqual([...new Set(pt.rows.map((r) => r[1]))], ['idle', 'scored']);
      const gross = res.datapoints.reduce((t, d) => t + d.joules!, 0);
      assert.ok(gross > 0, `gross ${gross}`);
      const integral = pt.rows.reduce((t, r) => t + ((r[3] as number) * r[2]) / 1000, 0);
      assert.ok(Math.abs(integral - gross) / gross < 0.01, `trace ${integral} J vs solver windows ${gross} J`);
      assert.equal(trace.csv().trim().split('\n').length - 1, trace.rows.length);
      for (const d of res.datapoints) {
        assert.equal(d.energy_validity!.valid, true, d.energy_validity!.reasons.join('; '));
        assert.deepEqual(d.energy_validity!.devices, ['package-0']);
        assert.deepEqual(Object.keys(d.by_domain!), ['package-0']);
      }
      const row = res.solvers[0]!;
      assert.equal(row.resolved_count, 1);
      assert.equal(row.joules_per_resolved_reason, null);
      const l = row.energy_layers!;
      assert.deepEqual(l.covered, ['host', 'idle', 'facility']);
      assert.equal(l.host!.tag, 'measured');
      assert.ok(Math.abs(l.host!.joules! - gross) < 1e-6, `${l.host!.joules} vs ${gross}`);
      assert.equal(l.host!.joules_per_correct, l.host!.joules);
      assert.equal(l.facility!.tag, 'modelled');
      assert.ok(Math.abs(l.facility!.joules! - 0.5 * gross) < 1e-6);
      assert.equal(res.config.pue, 1.5);
    } finally {
      await meter.close?.();
    }
  });

  test('a stalled counter and an unreadable one inside solver windows: each block says why, its energy is never summed, J per resolved is null with the reason', async () => {
    const { log, now, read } = loggedReads(energyPath);
    let hole = { from: 0, to: 0 };
    const meter = createRaplMeter({ root: tree.root, poll_ms: POLL_MS, now, read });
    const staller = solver('staller', async () => {
      let stop = burn();
      await sleep(100);
      stop();
      await sleep(900);
      stop = burn();
      await sleep(100);
      stop();
    });
    const gapper = solver('gapper', async () => {
      let stop = burn();
      await sleep(100);
      stop();
      hole = await unreadableFor(energyPath, 900, () => uj);
      stop = burn();
      await sleep(100);
      stop();
    });
    try {
      const res = await runCodeSuite({ suite: loadCodeSuite(suiteDir), solvers: [staller, gapper], rollouts: 1, meter, sandbox: noSandbox(), env: { PATH: process.env.PATH }, idle_ms: 0, preflight: false });
      const [s, g] = res.datapoints;
      assert.equal(s!.energy_validity!.valid, false);
      assert.ok(s!.energy_validity!.reasons.some((r) => /did not move .*stalled/.test(r)), s!.energy_validity!.reasons.join('; '));
      assert.ok(s!.joules! > 0, 'the gross reading stays beside its verdict');
      const srow = res.solvers.find((r) => r.solver === 'staller')!;
      assert.equal(srow.resolved_count, 1);
      assert.equal(srow.energy_invalid_count, 1);
      assert.equal(srow.total_joules, null);
      assert.equal(srow.joules_per_resolved, null);
      assert.match(srow.joules_per_resolved_reason!, /1 solver window\(s\) failed the validity checks \(one: .*stalled/);
      assert.equal(srow.energy_layers!.host!.joules_per_correct, null);
      // The gap, from the reads the test logged: the last good one before the hole to the first after it.
      const gap = gapAcross(log, hole);
      assert.ok(gap >= 900, `the test's own gap: ${gap}`);
      const v = g!.energy_validity!;
      assert.equal(v.valid, false);
      assert.equal(v.failed_reads, log.filter((l) => !l.ok).length);
      assert.ok(Math.abs(v.max_gap_ms! - gap) <= 0.05, `gap ${v.max_gap_ms} vs ${gap}`);
      assert.ok(v.reasons.some((r) => new RegExp(`gap between samples \\(over ${MAX_GAP_INTERVALS * POLL_MS} ms`).test(r)), v.reasons.join('; '));
      assert.equal(res.solvers.find((r) => r.solver === 'gapper')!.joules_per_resolved, null);
    } finally {
      await meter.close?.();
    }
  });

  test('a code run read back from the history keeps its idle and facility layers', async () => {
    const home = join(tmp, 'home');
    const out = join(tmp, 'h.json');
    const env = { JOULEBENCH_HOME: home };
    const args = ['code', '--suite', suiteDir, '--solvers', 'reference', '--sandbox', 'none', '--meter', 'rapl', '--powercap-root', tree.root];
    const r = await cli([...args, '--idle-ms', '50', '--pue', '1.3', '-q', '--out', out], { env });
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.solvers[0].energy_layers.facility.pue, 1.3);
    const back = await cli(['report', 'last', '--json'], { env });
    assert.equal(back.code, 0, back.stderr);
    const rebuilt = JSON.parse(back.stdout);
    assert.deepEqual(rebuilt.solvers[0].energy_layers, file.solvers[0].energy_layers);
  });

  test('code --power-trace writes the CSV and embeds the trace, --report gives it back; a meter reading no hardware is refused (exit 2)', async () => {
    const csv = join(tmp, 'p.csv');
    const out = join(tmp, 'r.json');
    const r = await cli(['code', '--suite', suiteDir, '--solvers', 'reference', '--sandbox', 'none', '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '50', '--pue', '1.2', '--power-trace', csv, '-q', '--no-history', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const text = readFileSync(csv, 'utf8');
    assert.match(text, /^t_utc,phase,package-0_w\n/);
    assert.match(text, /,idle,/);
    assert.match(text, /,scored,/);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(file.power_trace.domains, ['package-0']);
    assert.equal(file.solvers[0].energy_layers.facility.pue, 1.2);
    const back = await cli(['code', '--report', out, '--json']);
    assert.equal(back.code, 0, back.stderr);
    const rebuilt = JSON.parse(back.stdout);
    assert.deepEqual(rebuilt.power_trace, file.power_trace);
    assert.deepEqual(rebuilt.solvers[0].energy_layers, file.solvers[0].energy_layers);
    const bad = await cli(['code', '--suite', suiteDir, '--solvers', 'reference', '--sandbox', 'none', '--meter', 'estimate', '--power-trace', csv, '-q', '--no-history']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /^joulebench: .*--power-trace: meter estimate reads no hardware/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
  });
});
