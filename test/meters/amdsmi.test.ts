import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadAmdSmiBinding } from '../../src/meters/amdsmi/binding.js';
import { createAmdSmiMeter } from '../../src/meters/amdsmi/index.js';
import { rocmVisibleDevices } from '../../src/meters/amdsmi/visible.js';
import { cli } from '../helpers/cli.js';
import { meterContract } from './contract.js';

/**
 * The AMD SMI meter against a real shared library: test/meters/fixtures/fake-amdsmi.c, compiled here
 * with `cc`, exports AMD SMI's symbols with its C signatures and reads scripted counters from a
 * state file (FAKE_AMDSMI_STATE) that each test rewrites.
 */
const cc = spawnSync('cc', ['--version'], { encoding: 'utf8' });
const NO_CC = cc.status === 0 ? false : 'no C compiler (cc) on this machine: the fake libamd_smi.so cannot be built';

interface FakeGpu {
  uuid: string;
  /** Accumulator ticks, or `na` (no counter on this GPU). */
  ticks: bigint | 'na';
  resolution_uj: number;
  watts: number | 'na';
}

let dir = '';
let lib = '';
const state = (): string => join(dir, 'state');
function script(gpus: FakeGpu[], init = 0): void {
  const lines = [`init ${init}`, ...gpus.map((g) => `gpu ${g.uuid} ${g.ticks} ${g.resolution_uj} ${g.watts}`)];
  writeFileSync(state(), `${lines.join('\n')}\n`);
}

before(() => {
  if (NO_CC) return;
  dir = mkdtempSync(join(tmpdir(), 'jb-amdsmi-'));
  lib = join(dir, 'libamd_smi.so');
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', lib, 'test/meters/fixtures/fake-amdsmi.c'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  process.env.FAKE_AMDSMI_STATE = state();
});
after(() => {
  delete process.env.FAKE_AMDSMI_STATE;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const meterOn = (extra: Parameters<typeof createAmdSmiMeter>[0] = {}) => createAmdSmiMeter({ library: lib, poll_ms: 1_000_000, ...extra });

describe('amdsmi: the energy counter (fake libamd_smi.so)', { skip: NO_CC }, () => {
  it('binds the C API: sockets → processors, uuid, energy count with its float resolution, power info', async () => {
    script([
      { uuid: 'GPU-aa', ticks: 1000n, resolution_uj: 15.259, watts: 300 },
      { uuid: 'GPU-bb', ticks: 'na', resolution_uj: 1, watts: 'na' },
    ]);
    const b = await loadAmdSmiBinding(lib);
    b.init();
    const ps = b.processors();
    assert.deepEqual(ps.map((p) => b.uuid(p)), ['GPU-aa', 'GPU-bb']);
    assert.deepEqual(b.energyCount(ps[0]), { ticks: 1000n, resolution_uj: 15.259 });
    assert.equal(b.power_w(ps[0]), 300);
    assert.throws(() => b.energyCount(ps[1]), /AMDSMI_STATUS_NOT_SUPPORTED.*status 2/);
    b.shutdown();
  });

  it('ticks × resolution → J per GPU, labelled amdsmi, over the window', async () => {
    const gpus: FakeGpu[] = [
      { uuid: 'GPU-aa', ticks: 5_000_000n, resolution_uj: 15.259, watts: 300 },
      { uuid: 'GPU-bb', ticks: 0n, resolution_uj: 1, watts: 300 },
    ];
    script(gpus);
    const m = meterOn();
    const p = await m.probe();
    assert.ok(p.available, p.available ? '' : p.reason);
    const w = await m.start();
    gpus[0]!.ticks = 5_000_000n + 1_000_000n; // 1e6 × 15.259 µJ = 15.259 J
    gpus[1]!.ticks = 2_500_000n; // 2.5 J
    script(gpus);
    const r = await w.stop();
    assert.equal(r.source, 'amdsmi');
    assert.deepEqual(Object.keys(r.by_domain), ['gpu-0', 'gpu-1']);
    assert.ok(Math.abs(r.by_domain['gpu-0']!.joules! - 15.259) < 1e-9);
    assert.equal(r.by_domain['gpu-1']!.joules, 2.5);
    assert.equal(r.by_domain['gpu-0']!.source, 'amdsmi');
    assert.ok(Math.abs(r.joules! - 17.759) < 1e-9);
    await m.close?.();
  });

  it('a 32-bit wrap between samples is counted, and said', async () => {
    let t = 0;
    const top = 2n ** 32n - 1000n;
    const gpus: FakeGpu[] = [{ uuid: 'GPU-aa', ticks: top, resolution_uj: 1, watts: 300 }];
    script(gpus);
    const m = meterOn({ now: () => t });
    const w = await m.start();
    t = 1000; // 1 s later: 1000 ticks to the top, then 500 past zero = 1500 µJ
    gpus[0]!.ticks = 500n;
    script(gpus);
    const r = await w.stop();
    assert.equal(r.joules, 0.0015);
    assert.match(r.warnings?.join(' ') ?? '', /wrapped 1 time/);
    await m.close?.();
  });

  it('a counter that steps back by more than any GPU could draw is a reset: null, never a made-up wrap', async () => {
    let t = 0;
    const gpus: FakeGpu[] = [{ uuid: 'GPU-aa', ticks: 3_000_000_000n, resolution_uj: 15.259, watts: 300 }];
    script(gpus);
    const m = meterOn({ now: () => t });
    const w = await m.start();
    t = 100; // a wrap would mean (2^32 − 3e9) × 15.259 µJ ≈ 19.8 kJ in 100 ms ≈ 198 kW
    gpus[0]!.ticks = 10n;
    script(gpus);
    const r = await w.stop();
    assert.equal(r.joules, null);
    assert.equal(r.by_domain['gpu-0']!.joules, null);
    assert.match(r.warnings?.join(' ') ?? '', /went backwards.*reset/);
    // A window opened after the reset reads again.
    const w2 = await m.start();
    gpus[0]!.ticks = 1010n;
    script(gpus);
    t = 300;
    assert.ok(Math.abs((await w2.stop()).joules! - 0.015259) < 1e-12);
    await m.close?.();
  });

  it('a 64-bit accumulator above 2^32 that steps back is a reset, not a wrap', async () => {
    let t = 0;
    const gpus: FakeGpu[] = [{ uuid: 'GPU-aa', ticks: 2n ** 40n, resolution_uj: 1, watts: 300 }];
    script(gpus);
    const m = meterOn({ now: () => t });
    const w = await m.start();
    t = 10_000;
    gpus[0]!.ticks = 5n;
    script(gpus);
    assert.equal((await w.stop()).joules, null);
    await m.close?.();
  });

  it('a garbage forward jump (more energy than any GPU could draw) is refused: null, never counted', async () => {
    let t = 0;
    const gpus: FakeGpu[] = [{ uuid: 'GPU-aa', ticks: 1000n, resolution_uj: 15.259, watts: 300 }];
    script(gpus);
    const m = meterOn({ now: () => t });
    const w = await m.start();
    t = 100; // 2^50 ticks × 15.259 µJ ≈ 1.7e10 J
    gpus[0]!.ticks = 1000n + 2n ** 50n;
    script(gpus);
    const r = await w.stop();
    assert.equal(r.joules, null);
    assert.match(r.warnings?.join(' ') ?? '', /jumped by \d+ J in 100 ms .*not believed/);
    // 750 W for 50 ms (a coarse refresh step) is believed.
    const w2 = await m.start();
    t = 150;
    gpus[0]!.ticks = (gpus[0]!.ticks as bigint) + BigInt(Math.round((750 * 50 * 1000) / 15.259));
    script(gpus);
    const r2 = await w2.stop();
    assert.ok(r2.joules !== null && Math.abs(r2.joules - 37.5) < 0.01, String(r2.joules));
    await m.close?.();
  });

  it('a resolution that is not a positive number: unavailable, never a scaled guess', async () => {
    script([{ uuid: 'GPU-aa', ticks: 1n, resolution_uj: 0, watts: 300 }]);
    const p = await meterOn().probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /resolution 0 µJ is not a positive number/);
  });

  it('the counter stops reading mid-window: that GPU is null and the total unknown', async () => {
    const gpus: FakeGpu[] = [
      { uuid: 'GPU-aa', ticks: 100n, resolution_uj: 1, watts: 300 },
      { uuid: 'GPU-bb', ticks: 100n, resolution_uj: 1, watts: 300 },
    ];
    script(gpus);
    const m = meterOn();
    const w = await m.start();
    gpus[1]!.ticks = 'na';
    script(gpus);
    const r = await w.stop();
    assert.equal(r.joules, null);
    assert.equal(r.by_domain['gpu-1']!.joules, null);
    assert.equal(r.by_domain['gpu-0']!.joules, 0);
    assert.match(r.warnings?.join(' ') ?? '', /gpu-1: the energy counter did not read/);
    await m.close?.();
  });
});

describe('amdsmi: integrated power where a GPU has no counter', { skip: NO_CC }, () => {
  it('a missing counter falls back to current_socket_power integrated (trapezoids), labelled integrated-power', async () => {
    let t = 0;
    const gpus: FakeGpu[] = [
      { uuid: 'GPU-aa', ticks: 0n, resolution_uj: 1, watts: 1 },
      { uuid: 'GPU-bb', ticks: 'na', resolution_uj: 1, watts: 100 },
    ];
    script(gpus);
    const m = meterOn({ now: () => t, poll_ms: 250 });
    assert.equal((await m.probe()).available, true);
    assert.equal(m.floor_ms, 250, 'the sample interval is the floor in power mode');
    const w = await m.start(); // 100 W at t = 0
    t = 1000;
    gpus[1]!.watts = 300;
    gpus[0]!.ticks = 2_000_000n;
    script(gpus);
    const r = await w.stop(); // 300 W at t = 1 s: (100 + 300) / 2 × 1 s = 200 J
    assert.deepEqual(r.by_domain, { 'gpu-0': { joules: 2, source: 'amdsmi' }, 'gpu-1': { joules: 200, source: 'integrated-power' } });
    assert.equal(r.source, 'mixed');
    const d = m.describe() as { domains: { source: string; resolution_uj: number | null }[] };
    assert.deepEqual(d.domains.map((x) => x.source), ['amdsmi', 'integrated-power']);
    await m.close?.();
  });

  it('samples in the background while a window is open', async () => {
    script([{ uuid: 'GPU-aa', ticks: 'na', resolution_uj: 1, watts: 50 }]);
    const m = meterOn({ poll_ms: 5 });
    const w = await m.start();
    await sleep(60);
    const r = await w.stop();
    assert.ok(r.joules !== null && Math.abs(r.joules - (50 * r.window_ms) / 1000) < 0.5, `${r.joules} J over ${r.window_ms} ms`);
    await m.close?.();
  });

  it('a GPU with neither a counter nor power: unavailable, saying which', async () => {
    script([
      { uuid: 'GPU-aa', ticks: 1n, resolution_uj: 1, watts: 1 },
      { uuid: 'GPU-bb', ticks: 'na', resolution_uj: 1, watts: 'na' },
    ]);
    const p = await meterOn().probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : `${p.reason} ${p.fix}`, /gpu-1 has neither an energy counter nor a power reading.*ROCR_VISIBLE_DEVICES/);
  });
});

describe('amdsmi: ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES', () => {
  it('ROCR first, then HIP indexes into what ROCR left', () => {
    assert.deepEqual(rocmVisibleDevices({}, 4).indices, [0, 1, 2, 3]);
    assert.deepEqual(rocmVisibleDevices({ rocr: '2,3' }, 4).indices, [2, 3]);
    assert.deepEqual(rocmVisibleDevices({ rocr: '2,3', hip: '1' }, 4).indices, [3]);
    assert.deepEqual(rocmVisibleDevices({ hip: '3,0' }, 4).indices, [3, 0]);
    assert.deepEqual(rocmVisibleDevices({ hip: '' }, 4).indices, []);
  });
  it('a list stops at the first entry that names no device, and says what it ignored', () => {
    assert.deepEqual(rocmVisibleDevices({ rocr: '0,9,1' }, 4), { indices: [0], ignored: ['ROCR_VISIBLE_DEVICES:9', 'ROCR_VISIBLE_DEVICES:1'] });
    assert.deepEqual(rocmVisibleDevices({ rocr: '1', hip: '1' }, 4), { indices: [], ignored: ['HIP_VISIBLE_DEVICES:1'] });
    assert.deepEqual(rocmVisibleDevices({ hip: '-1' }, 4).indices, []);
    assert.deepEqual(rocmVisibleDevices({ hip: 'GPU-abc' }, 4).indices, []);
  });
  it('the meter reads only the visible GPUs, under their AMD SMI index', { skip: NO_CC }, async () => {
    const gpus: FakeGpu[] = [
      { uuid: 'GPU-aa', ticks: 0n, resolution_uj: 1, watts: 1 },
      { uuid: 'GPU-bb', ticks: 0n, resolution_uj: 1, watts: 1 },
      { uuid: 'GPU-cc', ticks: 0n, resolution_uj: 1, watts: 1 },
    ];
    script(gpus);
    const m = meterOn({ rocr_visible_devices: '1,2', hip_visible_devices: '1' });
    const w = await m.start();
    gpus.forEach((g, i) => (g.ticks = BigInt((i + 1) * 1_000_000)));
    script(gpus);
    const r = await w.stop();
    assert.deepEqual(Object.keys(r.by_domain), ['gpu-2']);
    assert.equal(r.joules, 3);
    await m.close?.();
  });
  it('nothing visible: unavailable, quoting the variables', { skip: NO_CC }, async () => {
    script([{ uuid: 'GPU-aa', ticks: 0n, resolution_uj: 1, watts: 1 }]);
    const p = await meterOn({ hip_visible_devices: '' }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /no AMD GPU visible \(HIP_VISIBLE_DEVICES=""\)/);
  });
});

describe('amdsmi: when it cannot read', () => {
  it('init fails: unavailable with AMD SMI’s message', { skip: NO_CC }, async () => {
    script([], 34);
    const p = await meterOn().probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /amdsmi_init: AMDSMI_STATUS_DRIVER_NOT_LOADED/);
  });
  it('the library is absent: unavailable, naming it, with the fix', async () => {
    const p = await createAmdSmiMeter({ library: '/nonexistent/libamd_smi.so' }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : `${p.reason} ${p.fix}`, /cannot load \/nonexistent\/libamd_smi\.so.*install ROCm/);
  });
  it('no amdgpu driver: unavailable, saying so (auto then loads no koffi: see nvml.test.ts)', async (t) => {
    if (process.platform !== 'linux') return t.skip('the driver check reads Linux paths');
    const { existsSync } = await import('node:fs');
    if (existsSync('/dev/kfd') || existsSync('/sys/module/amdgpu')) return t.skip('this machine has the amdgpu driver');
    const p = await createAmdSmiMeter().probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /no AMD GPU driver/);
  });
});

describe('amdsmi: as a user runs it', () => {
  it('joulebench meter --meter amdsmi -- CMD: the GPU energy the command spent, labelled amdsmi', { skip: NO_CC }, async () => {
    script([{ uuid: 'GPU-aa', ticks: 0n, resolution_uj: 1, watts: 300 }]);
    // The command itself advances the fake counter by 2e6 ticks × 1 µJ = 2 J.
    const cmd = `printf 'init 0\\ngpu GPU-aa 2000000 1 300\\n' > '${state()}'; sleep 0.3`;
    const r = await cli(['meter', '--meter', 'amdsmi', '--no-idle', '--json', '--', 'sh', '-c', cmd], {
      env: { JOULEBENCH_AMDSMI_LIBRARY: lib, FAKE_AMDSMI_STATE: state() },
    });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { source: string; gross_joules: number; by_domain: Record<string, { source: string }> };
    assert.equal(out.source, 'amdsmi');
    assert.equal(out.gross_joules, 2);
    assert.equal(out.by_domain['gpu-0']?.source, 'amdsmi');
  });
  it('no AMD driver: one line saying why and how to fix it', async (t) => {
    const { existsSync } = await import('node:fs');
    if (existsSync('/dev/kfd') || existsSync('/sys/module/amdgpu')) return t.skip('this machine has the amdgpu driver');
    const r = await cli(['meter', '--meter', 'amdsmi', '--no-idle', '--', 'true'], { env: { JOULEBENCH_AMDSMI_LIBRARY: '' } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr.trim(), /^joulebench: meter amdsmi cannot read here: no AMD GPU driver .*\(fix: /);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});

meterContract(
  'amdsmi (fake libamd_smi.so, counter)',
  async () => {
    const gpus: FakeGpu[] = [{ uuid: 'GPU-aa', ticks: 0n, resolution_uj: 15.259, watts: 300 }];
    script(gpus);
    return {
      meter: createAmdSmiMeter({ library: lib, poll_ms: 20 }),
      async work(ms) {
        await sleep(ms);
        gpus[0]!.ticks = (gpus[0]!.ticks as bigint) + BigInt(Math.round((300 * ms * 1000) / 15.259));
        script(gpus);
      },
    };
  },
  NO_CC ? { skip: Object.fromEntries(['probe says available, or why not', 'a reading is labelled and never NaN', 'the total is the sum of the labelled domains', 'a window shorter than the floor is flagged', 'a window longer than the floor is not flagged', 'an outer window holds at least what an inner one does', 'describe is plain JSON naming the meter', 'close ends the meter'].map((c) => [c, NO_CC])) } : {},
);
