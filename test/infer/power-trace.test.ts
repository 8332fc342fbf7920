import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runInfer, type ArmTraces, type InferOptions } from '../../src/infer/protocol.js';
import { DEFAULT_INFER_PROMPT } from '../../src/infer/prompt.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { cli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { gapAcross, loggedReads, setEnergy, unreadableFor, writePowercapTree } from '../meters/powercap-tree.js';
import { tempDir } from '../code/helpers.js';

const tmp = tempDir('jb-infer-trace-');
const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1_000_000 }]);
const energyPath = join(tree.root, 'intel-rapl:0', 'energy_uj');
after(() => {
  tree.cleanup();
  rmSync(tmp, { recursive: true, force: true });
});

let uj = 1_000_000;
/** The counter moves only while the "server" works on a request (≈ 10 W), so the trace and the request windows read the same energy. */
async function burn(ms: number): Promise<void> {
  const t = setInterval(() => setEnergy(tree.root, 'intel-rapl:0', (uj += 10_000)), 1);
  await sleep(ms);
  clearInterval(t);
}

// Long enough that a busy machine's late poll does not fail a healthy window (4 intervals = 400 ms).
const POLL_MS = 100;

function options(url: string, over: Partial<InferOptions>): InferOptions {
  return {
    baseUrl: url,
    models: ['m1'],
    threads: ['default'],
    runs: 2,
    warmup: 1,
    cold: 1,
    prompt: DEFAULT_INFER_PROMPT,
    prompt_source: 'built-in',
    num_predict: 4,
    seed: 42,
    temperature: 0,
    meter: null,
    gpu_snapshot_cmd: null,
    peak: null,
    cpu_default_peak: null,
    poll_interval_ms: 2,
    unload_timeout_ms: 2000,
    host: {},
    argv: [],
    ...over,
  };
}

describe('infer: power trace per arm, validity per request window, energy layers, over a live powercap tree', () => {
  it('each arm traced idle → warmup (cold and warmup runs) → scored; the scored rows integrate to the scored runs\' joules within 1 %; layers per decoded token', async () => {
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 10, prefill_ms_per_token: 0.02, during: () => burn(200) });
    const url = await fake.start();
    const meter = createRaplMeter({ root: tree.root, poll_ms: POLL_MS });
    const traces: ArmTraces = { idle_ms: 200, current: null, done: [] };
    try {
      const file = await runInfer(options(url, { threads: ['default', 4], meter, power_trace: traces, pue: 1.5 }));
      assert.deepEqual(traces.done.map((d) => d.arm), ['m1@t=default', 'm1@t=4']);
      assert.equal(file.pue, 1.5);
      for (const arm of file.arms) {
        const pt = arm.power_trace!;
        assert.deepEqual(pt.domains, ['package-0']);
        assert.deepEqual([...new Set(pt.rows.map((r) => r[1]))], ['idle', 'warmup', 'scored']);
        const integral = (phase: string) => pt.rows.filter((r) => r[1] === phase).reduce((t, r) => t + ((r[3] as number) * r[2]) / 1000, 0);
        const scored = arm.runs.reduce((t, r) => t + r.energy_j!, 0);
        const before = [...arm.cold_load, ...arm.warmup_discarded].reduce((t, r) => t + r.energy_j!, 0);
        assert.ok(scored > 0 && before > 0, `scored ${scored} J, before ${before} J`);
        assert.ok(Math.abs(integral('scored') - scored) / scored < 0.01, `${arm.id}: trace ${integral('scored')} J vs scored runs ${scored} J`);
        assert.ok(Math.abs(integral('warmup') - before) / before < 0.01, `${arm.id}: trace ${integral('warmup')} J vs cold + warmup runs ${before} J`);
        assert.equal(integral('idle'), 0);
        for (const r of [...arm.cold_load, ...arm.warmup_discarded, ...arm.runs]) {
          assert.equal(r.energy_validity!.valid, true, r.energy_validity!.reasons.join('; '));
          assert.deepEqual(r.energy_validity!.devices, ['package-0']);
        }
        const e = file.summary.arms.find((a) => a.id === arm.id)!.stats!.energy;
        assert.equal(e.invalid_windows, 0);
        assert.equal(e.null_reason, null);
        const tokens = arm.runs.reduce((t, r) => t + r.eval_count!, 0);
        assert.deepEqual(e.layers!.covered, ['host', 'facility']);
        assert.ok(Math.abs(e.layers!.host!.joules_per_correct! - scored / tokens) < 1e-6);
        assert.equal(e.layers!.facility!.tag, 'modelled');
        assert.ok(Math.abs(e.layers!.facility!.joules! - 0.5 * scored) < 1e-6);
      }
    } finally {
      await meter.close?.();
      await fake.stop();
    }
  });

  it('a stalled counter and an unreadable one in scored request windows: each block says why, no per-token figure, the arm\'s J/token null with the reason', async () => {
    const { log, now, read } = loggedReads(energyPath);
    let hole = { from: 0, to: 0 };
    const meter = createRaplMeter({ root: tree.root, poll_ms: POLL_MS, now, read });
    const during = async (n: number): Promise<void> => {
      if (n === 2) {
        await burn(50);
        await sleep(900); // stalled: readable, not moving
        await burn(50);
      } else if (n === 3) {
        await burn(50);
        hole = await unreadableFor(energyPath, 900, () => uj);
        await burn(50);
      } else await burn(100);
    };
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 10, prefill_ms_per_token: 0.02, during });
    const url = await fake.start();
    try {
      const file = await runInfer(options(url, { cold: 0, warmup: 0, runs: 3, meter }));
      const [ok, stalled, gapped] = file.arms[0]!.runs;
      assert.equal(ok!.energy_validity!.valid, true, ok!.energy_validity!.reasons.join('; '));
      assert.ok(ok!.j_per_decoded_token! > 0);
      assert.equal(stalled!.energy_validity!.valid, false);
      assert.ok(stalled!.energy_validity!.reasons.some((r) => /did not move .*stalled/.test(r)), stalled!.energy_validity!.reasons.join('; '));
      assert.ok(stalled!.energy_j! > 0, 'the gross reading stays beside its verdict');
      assert.equal(stalled!.j_per_decoded_token, null);
      assert.equal(stalled!.decoded_tokens_per_j, null);
      // The gap, from the reads the test logged: the last good one before the hole to the first after it.
      const gap = gapAcross(log, hole);
      assert.ok(gap >= 900, `the test's own gap: ${gap}`);
      const v = gapped!.energy_validity!;
      assert.equal(v.valid, false);
      assert.equal(v.failed_reads, log.filter((l) => !l.ok).length);
      assert.ok(Math.abs(v.max_gap_ms! - gap) <= 0.05, `gap ${v.max_gap_ms} vs ${gap}`);
      assert.equal(gapped!.j_per_decoded_token, null);
      const e = file.summary.arms[0]!.stats!.energy;
      assert.equal(e.invalid_windows, 2);
      assert.equal(e.j_per_decoded_token_median, null);
      assert.equal(e.joules_median, null);
      assert.match(e.null_reason!, /^2 of 3 scored run window\(s\) failed the validity checks \(run 2: .*stalled/);
      assert.equal(e.layers!.host!.joules_per_correct, null);
    } finally {
      await meter.close?.();
      await fake.stop();
    }
  });

  it('infer --power-trace writes one CSV with an arm column and embeds each arm\'s trace, --report gives it back; a meter reading no hardware is refused (exit 2)', async () => {
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 10, prefill_ms_per_token: 0.02 });
    const url = await fake.start();
    try {
      const csv = join(tmp, 'p.csv');
      const out = join(tmp, 'r.json');
      const base = ['infer', '--model', 'm1', '--base-url', url, '--cold', '1', '--warmup', '0', '--runs', '1', '--gpu-snapshot-cmd', '', '--unload-timeout-ms', '2000', '-q', '--no-history'];
      const r = await cli([...base, '--threads', 'default,4', '--meter', 'rapl', '--powercap-root', tree.root, '--pue', '1.2', '--power-trace', csv, '-o', out]);
      assert.equal(r.code, 0, r.stderr);
      const lines = readFileSync(csv, 'utf8').trim().split('\n');
      assert.equal(lines[0], 't_utc,arm,phase,package-0_w');
      assert.deepEqual([...new Set(lines.slice(1).map((l) => l.split(',').slice(1, 3).join(',')))], ['m1@t=default,idle', 'm1@t=default,warmup', 'm1@t=default,scored', 'm1@t=4,idle', 'm1@t=4,warmup', 'm1@t=4,scored']);
      const file = JSON.parse(readFileSync(out, 'utf8'));
      assert.equal(file.pue, 1.2);
      assert.deepEqual(file.arms[1].power_trace.domains, ['package-0']);
      assert.equal(file.summary.arms[0].stats.energy.layers.facility.pue, 1.2);
      const back = await cli(['infer', '--report', out, '--json']);
      assert.equal(back.code, 0, back.stderr);
      assert.deepEqual(JSON.parse(back.stdout).arms.map((a: { power_trace: unknown }) => a.power_trace), file.arms.map((a: { power_trace: unknown }) => a.power_trace));
      const bad = await cli([...base, '--meter', 'estimate', '--power-trace', csv, '-o', join(tmp, 'bad.json')]);
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(bad.stderr, /^joulebench: --power-trace: meter estimate reads no hardware/);
      assert.equal(bad.stderr.trim().split('\n').length, 1);
    } finally {
      await fake.stop();
    }
  });
});
