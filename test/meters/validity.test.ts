import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { aggregate } from '../../src/core/aggregate.js';
import type { WindowValidity } from '../../src/core/energy.js';
import type { CaseResult } from '../../src/core/types.js';
import { createAmdSmiMeter } from '../../src/meters/amdsmi/index.js';
import { NVML_ERROR_NOT_SUPPORTED, NvmlError, type NvmlBinding } from '../../src/meters/nvml/binding.js';
import { createNvmlMeter } from '../../src/meters/nvml/index.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { MAX_GAP_INTERVALS, MIN_COVERAGE_PCT } from '../../src/meters/validity.js';
import { caseLine } from '../../src/runner/case-line.js';
import { checkCaseLine } from '../../src/runner/case-check.js';
import { setEnergy, writePowercapTree } from './powercap-tree.js';

const POLL_MS = 20;
const LIMIT_MS = MAX_GAP_INTERVALS * POLL_MS;

/**
 * A live powercap tree: an in-process writer advances package-0's counter every 4 ms while the RAPL
 * meter polls every 20 ms. The test logs every read of energy_uj itself (time, success), so coverage
 * and the largest gap are computed here from what was read, not taken from the meter.
 */
function liveTree() {
  const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1_000_000 }]);
  const energyPath = join(tree.root, 'intel-rapl:0', 'energy_uj');
  let uj = 1_000_000;
  let writer: NodeJS.Timeout | null = null;
  const startWriter = () => {
    writer = setInterval(() => setEnergy(tree.root, 'intel-rapl:0', (uj += 4000)), 4);
  };
  const stopWriter = () => {
    if (writer) clearInterval(writer);
    writer = null;
  };
  const log: { t: number; ok: boolean; v?: string }[] = [];
  let logging = false;
  // A read is logged at the time the meter took for its sample (the clock's latest reading), so a busy
  // machine's pause between the two cannot make them disagree.
  let last_ms = 0;
  const meter = createRaplMeter({
    root: tree.root,
    poll_ms: POLL_MS,
    now: () => (last_ms = performance.now()),
    read: (p) => {
      try {
        const text = readFileSync(p, 'utf8');
        if (logging && p === energyPath) log.push({ t: last_ms, ok: true, v: text });
        return text;
      } catch (e) {
        if (logging && p === energyPath) log.push({ t: last_ms, ok: false });
        throw e;
      }
    },
  });
  return {
    tree,
    energyPath,
    meter,
    log,
    startWriter,
    stopWriter,
    /** Runs `during` inside one window, logging its reads. */
    async window(during: () => Promise<void>) {
      log.length = 0;
      logging = true;
      const w = await meter.start();
      await during();
      const r = await w.stop();
      logging = false;
      return r;
    },
    async close() {
      stopWriter();
      await meter.close?.();
      tree.cleanup();
    },
  };
}

/**
 * Coverage and the largest gap from the test's own read log: the window runs from the read at its start
 * edge to the read at its stop edge (docs/energy-meters.md), whether those reads succeeded or not.
 */
function fromLog(log: readonly { t: number; ok: boolean; v?: string }[]) {
  const good = log.filter((l) => l.ok);
  const ok = good.map((l) => l.t);
  let gap = 0;
  for (let i = 1; i < ok.length; i++) gap = Math.max(gap, ok[i]! - ok[i - 1]!);
  // The longest time the counter read one value (from the read that first saw it).
  let stall = 0;
  let since = good[0]!.t;
  for (let i = 1; i < good.length; i++) {
    if (good[i]!.v === good[i - 1]!.v) stall = Math.max(stall, good[i]!.t - since);
    else since = good[i]!.t;
  }
  const span = log.at(-1)!.t - log[0]!.t;
  return { samples: ok.length, failed: log.length - ok.length, coverage: ((ok.at(-1)! - ok[0]!) * 100) / span, gap, stall };
}

function agrees(v: WindowValidity, mine: ReturnType<typeof fromLog>): void {
  assert.equal(v.samples, mine.samples);
  assert.equal(v.failed_reads, mine.failed);
  assert.ok(Math.abs(v.coverage_pct! - Math.min(100, mine.coverage)) <= 0.05, `coverage ${v.coverage_pct} vs ${mine.coverage}`);
  assert.ok(Math.abs(v.max_gap_ms! - mine.gap) <= 0.05, `gap ${v.max_gap_ms} vs ${mine.gap}`);
}

describe('validity of a RAPL window over a live powercap tree', () => {
  it('a window polled throughout: the meter, devices, samples, coverage and largest gap agree with the reads the test logged', async () => {
    const t = liveTree();
    try {
      assert.ok((await t.meter.probe()).available);
      t.startWriter();
      const r = await t.window(() => sleep(300));
      const v = r.validity!;
      assert.equal(v.meter, 'rapl');
      assert.deepEqual(v.devices, ['package-0']);
      const mine = fromLog(t.log);
      agrees(v, mine);
      // The verdict is the documented rule applied to what the test saw (whatever the machine's load did to timing).
      assert.equal(v.valid, mine.coverage >= MIN_COVERAGE_PCT && mine.gap <= LIMIT_MS && mine.stall <= LIMIT_MS && mine.failed === 0, v.reasons.join('; '));
      assert.equal(v.wraps, 0);
      assert.ok(r.joules! > 0);
    } finally {
      await t.close();
    }
  });

  it('a gap: energy_uj unreadable for 400 ms inside the window — failed reads, a gap over 4 intervals, not valid', async () => {
    const t = liveTree();
    try {
      await t.meter.probe();
      t.startWriter();
      const r = await t.window(async () => {
        await sleep(60);
        t.stopWriter();
        rmSync(t.energyPath);
        mkdirSync(t.energyPath); // reading a directory fails with EISDIR
        await sleep(400);
        rmSync(t.energyPath, { recursive: true });
        writeFileSync(t.energyPath, '9000000\n');
        t.startWriter();
        await sleep(60);
      });
      const v = r.validity!;
      const mine = fromLog(t.log);
      agrees(v, mine);
      assert.ok(mine.gap >= 400, `the test's own gap: ${mine.gap}`);
      assert.equal(v.valid, false);
      assert.ok(v.failed_reads > 0);
      assert.ok(v.reasons.some((x) => /gap between samples/.test(x)), v.reasons.join('; '));
      assert.ok(v.reasons.some((x) => /failed read/.test(x)), v.reasons.join('; '));
    } finally {
      await t.close();
    }
  });

  it('a stalled counter: readable, but it does not move for 500 ms while the poller reads it — not valid, the energy still read', async () => {
    const t = liveTree();
    try {
      await t.meter.probe();
      t.startWriter();
      const r = await t.window(async () => {
        await sleep(60);
        t.stopWriter();
        await sleep(500);
        t.startWriter();
        await sleep(60);
      });
      const v = r.validity!;
      assert.equal(v.failed_reads, 0);
      assert.ok(fromLog(t.log).stall >= 400, `the test's own stall: ${fromLog(t.log).stall}`);
      assert.equal(v.valid, false);
      assert.ok(v.reasons.some((x) => /did not move .*stalled/.test(x)), v.reasons.join('; '));
      assert.ok(r.joules !== null && r.joules > 0);
    } finally {
      await t.close();
    }
  });

  it('a wrap inside the window is counted in the block', async () => {
    const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 990, max_uj: 1000 }]);
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
    try {
      await meter.probe();
      const w = await meter.start();
      setEnergy(tree.root, 'intel-rapl:0', 10);
      const r = await w.stop();
      assert.equal(r.joules, 20 / 1e6);
      assert.equal(r.validity!.wraps, 1);
      assert.equal(r.validity!.valid, true);
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });
});

/** A fake NVML binding (the real library's calling pattern) on a virtual clock. */
function nvml(energy_mj: number | 'unsupported') {
  const gpu = { energy_mj, power_mw: 100_000, powerFails: false };
  const binding: NvmlBinding = {
    init: () => {},
    shutdown: () => {},
    deviceCount: () => 1,
    handleByIndex: (i) => i,
    uuid: () => 'GPU-aaaa',
    name: () => 'NVIDIA H100',
    totalEnergy_mj: () => {
      if (gpu.energy_mj === 'unsupported') throw new NvmlError(NVML_ERROR_NOT_SUPPORTED, 'Not Supported');
      return gpu.energy_mj;
    },
    power_mw: () => {
      if (gpu.powerFails) throw new NvmlError(999, 'Unknown Error');
      return gpu.power_mw;
    },
  };
  return { gpu, binding };
}

describe('validity of NVML windows', () => {
  it('the energy counter read at the two edges covers the window whatever its length: 2 samples, 100 %, the gap is the window, valid', async () => {
    let t = 0;
    const f = nvml(1_000_000);
    const m = createNvmlMeter({ binding: f.binding, now: () => t });
    await m.probe();
    const w = await m.start();
    t = 60_000;
    f.gpu.energy_mj = 1_000_000 + 6_000_000;
    const r = await w.stop();
    assert.equal(r.joules, 6000);
    assert.deepEqual(r.validity, { valid: true, reasons: [], meter: 'nvml', devices: ['gpu-0'], samples: 2, coverage_pct: 100, max_gap_ms: 60_000, wraps: 0, failed_reads: 0 });
    await m.close?.();
  });

  it('integrated power: samples further apart than 4 intervals, or a failed power read, make the window not valid', async () => {
    let t = 0;
    const f = nvml('unsupported');
    const m = createNvmlMeter({ binding: f.binding, now: () => t, poll_ms: 100 });
    await m.probe();
    const w = await m.start();
    t = 1000; // no poll fired in between: a 1000 ms gap over a 400 ms limit
    const r = await w.stop();
    assert.equal(r.validity!.valid, false);
    assert.equal(r.validity!.max_gap_ms, 1000);
    assert.match(r.validity!.reasons.join(' '), /1000 ms gap between samples \(over 400 ms/);

    const w2 = await m.start();
    t = 1050;
    f.gpu.powerFails = true;
    const r2 = await w2.stop();
    assert.equal(r2.validity!.failed_reads, 1);
    assert.equal(r2.validity!.samples, 1);
    assert.equal(r2.validity!.valid, false);
    await m.close?.();
  });
});

const cc = spawnSync('cc', ['--version'], { encoding: 'utf8' });
const NO_CC = cc.status === 0 ? false : 'no C compiler (cc): the fake libamd_smi.so cannot be built';

describe('validity of AMD SMI windows (fake libamd_smi.so)', { skip: NO_CC }, () => {
  let dir = '';
  let lib = '';
  const script = (ticks: string) => writeFileSync(join(dir, 'state'), `init 0\ngpu GPU-aa ${ticks} 1 300\n`);
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'jb-amdsmi-validity-'));
    lib = join(dir, 'libamd_smi.so');
    const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', lib, 'test/meters/fixtures/fake-amdsmi.c'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    process.env.FAKE_AMDSMI_STATE = join(dir, 'state');
  });
  after(() => {
    delete process.env.FAKE_AMDSMI_STATE;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a wrap is counted; a counter that stops reading is a failed read and the window is not valid', async () => {
    let t = 0;
    script(String(2n ** 32n - 1000n));
    const m = createAmdSmiMeter({ library: lib, poll_ms: 1_000_000, now: () => t });
    assert.ok((await m.probe()).available);
    const w = await m.start();
    t = 1000;
    script('500');
    const r = await w.stop();
    assert.equal(r.validity!.wraps, 1);
    assert.equal(r.validity!.valid, true);
    assert.deepEqual(r.validity!.devices, ['gpu-0']);

    const w2 = await m.start();
    t = 1100;
    script('na');
    const r2 = await w2.stop();
    assert.equal(r2.joules, null);
    assert.equal(r2.validity!.failed_reads, 1);
    assert.equal(r2.validity!.valid, false);
    await m.close?.();
  });
});

const BAD: WindowValidity = { valid: false, reasons: ['a 900 ms gap between samples (over 400 ms, 4 sampling intervals)'], meter: 'nvml', devices: ['gpu-0'], samples: 3, coverage_pct: 100, max_gap_ms: 900, wraps: 0, failed_reads: 0 };
const GOOD: WindowValidity = { ...BAD, valid: true, reasons: [], max_gap_ms: 90 };

function result(i: number, over: Partial<CaseResult> = {}): CaseResult {
  return {
    record: 'case', phase: 'scored', pass: 0, index: i, case_id: `c${i}`, dataset: 'd', response: 'x', stage: 'neural', expected: 'x', passed: true, score: null, weight: 1,
    joules: 2, energy_source: 'nvml', below_floor: false, latency_ms: 1, ttft_ms: null, tpot_ms: null, prompt_tokens: 1, completion_tokens: 1, cost_usd: null,
    attempts: 1, retry_overhead_ms: 0, error: null, ...over,
  };
}
const ctx = (validity?: WindowValidity) => ({
  suite: { name: 's', version: '1', digest: 'd' }, target: 't', meter: 'nvml', warmup: 0, repeats: 1,
  energy: { idle: { status: 'measured' as const, watts: 1 }, suite: { joules: 10, source: 'nvml' as const, window_ms: 1000, below_floor: false, ...(validity ? { validity } : {}) } },
});

describe('J/correct only from valid windows', () => {
  it('a valid suite window changes no figure; the block is reported beside them', () => {
    const cases = [result(0), result(1)];
    const plain = aggregate(cases, ctx());
    const withValid = aggregate(cases, ctx(GOOD));
    assert.equal(withValid.joules_per_correct, plain.joules_per_correct);
    assert.equal(withValid.net_joules_per_correct, plain.net_joules_per_correct);
    assert.equal(plain.net_joules_per_correct, 4.5);
    assert.deepEqual(withValid.suite_window_validity, GOOD);
    assert.equal('suite_window_validity' in plain, false);
  });

  it('an invalid suite window gives no net J/correct, and no J/correct when it is the basis: null with the reason', () => {
    const below = [result(0, { below_floor: true }), result(1, { below_floor: true })];
    assert.equal(aggregate(below, ctx(GOOD)).joules_per_correct, 5);
    const r = aggregate(below, ctx(BAD));
    assert.equal(r.joules_per_correct, null);
    assert.equal(r.net_joules_per_correct, null);
    assert.match(r.energy_basis_reason ?? '', /suite window is not valid \(a 900 ms gap/);
    assert.equal(r.gross_joules, 10); // the reading itself stays, beside its validity
  });

  it('a case whose window is not valid is never summed: the total comes from the valid suite window, and the count says why', () => {
    const cases = [result(0), result(1, { energy_invalid: 'a 900 ms gap between samples' })];
    const r = aggregate(cases, ctx(GOOD));
    assert.equal(r.energy_basis, 'suite_window');
    assert.equal(r.total_joules, 10);
    assert.equal(r.energy_invalid_count, 1);
    assert.match(r.energy_basis_reason ?? '', /1 case window\(s\) failed the validity checks/);
  });

  it('the case line keeps the flag (and only when set), and reads back', () => {
    const line = caseLine(result(1, { energy_invalid: 'a 900 ms gap' }));
    const parsed = JSON.parse(line) as Record<string, unknown>;
    assert.equal(parsed.energy_invalid, 'a 900 ms gap');
    checkCaseLine(parsed, 'r.jsonl', 1);
    assert.equal('energy_invalid' in JSON.parse(caseLine(result(0))), false);
  });
});
