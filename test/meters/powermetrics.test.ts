import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'plist';
import { integrateSamples } from '../../src/meters/powermetrics/integrate.js';
import { createPowermetricsMeter } from '../../src/meters/powermetrics/index.js';
import { parsePowerSample } from '../../src/meters/powermetrics/parse.js';
import { meterContract } from './contract.js';

const RECORDED = readFileSync('test/meters/fixtures/powermetrics-apple.plist', 'utf8');

/**
 * A fake `powermetrics` put first on PATH: checks it was asked for plist samples of cpu_power and
 * gpu_power, then behaves as FAKE_PM_MODE says — `ok` writes a sample every -i ms at FAKE_PM_CPU_MW
 * (and fixed GPU/ANE power), NUL-separated like the real tool; `nonroot` fails as powermetrics does
 * without root; `garbage` writes a broken plist; `die` writes two samples and exits.
 */
const FAKE = `#!${process.execPath}
const args = process.argv.slice(2);
const at = (f) => args[args.indexOf(f) + 1];
if (at('--samplers') !== 'cpu_power,gpu_power' || at('-f') !== 'plist' || !(Number(at('-i')) > 0)) {
  process.stderr.write('fake powermetrics: unexpected arguments ' + args.join(' ') + '\\n'); process.exit(2);
}
const mode = process.env.FAKE_PM_MODE ?? 'ok';
if (mode === 'nonroot') { process.stderr.write('powermetrics must be invoked as the superuser\\n'); process.exit(1); }
if (mode === 'garbage') { process.stdout.write('<?xml version="1.0"?><plist><dict><key>elapsed_ns</key>\\0'); setInterval(() => {}, 1000); }
else {
  const i = Number(at('-i'));
  const cpu = Number(process.env.FAKE_PM_CPU_MW ?? '2000');
  let n = 0;
  let last = process.hrtime.bigint();
  const one = () => {
    const t = process.hrtime.bigint();
    const ns = Number(t - last);
    last = t;
    process.stdout.write('<?xml version="1.0" encoding="UTF-8"?>\\n<plist version="1.0"><dict><key>elapsed_ns</key><integer>' + ns +
      '</integer><key>processor</key><dict><key>cpu_power</key><real>' + cpu + '</real><key>gpu_power</key><real>500</real><key>ane_power</key><real>0</real></dict></dict></plist>\\n\\0');
    if (mode === 'die' && ++n >= 2) process.exit(0);
  };
  setInterval(one, i);
}
process.on('SIGTERM', () => process.exit(0));
`;

let dir = '';
let oldPath: string | undefined;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'jb-pm-'));
  writeFileSync(join(dir, 'powermetrics'), FAKE);
  chmodSync(join(dir, 'powermetrics'), 0o755);
  oldPath = process.env.PATH;
  process.env.PATH = `${dir}${delimiter}${oldPath ?? ''}`;
});
after(() => {
  process.env.PATH = oldPath;
  delete process.env.FAKE_PM_MODE;
  delete process.env.FAKE_PM_CPU_MW;
  rmSync(dir, { recursive: true, force: true });
});

/** The meter as on a Mac: `powermetrics` found on PATH (the fake). */
const onMac = (interval_ms = 20) => createPowermetricsMeter({ platform: 'darwin', interval_ms });

describe('powermetrics: the recorded plist output', () => {
  const docs = RECORDED.split('\0').filter((d) => d.trim() !== '');
  it('parses CPU, GPU and ANE power (mW → W) and the sample length', () => {
    assert.equal(docs.length, 2);
    assert.deepEqual(parsePowerSample(docs[0]!, parse), { elapsed_ms: 100.452, watts: { cpu: 1.523, gpu: 0.2125, ane: 0 } });
    assert.deepEqual(parsePowerSample(docs[1]!, parse), { elapsed_ms: 100.21, watts: { cpu: 4.89025, gpu: 1.03, ane: 0.036 } });
  });
  it('Intel Macs: processor.package_watts', () => {
    const xml = '<plist version="1.0"><dict><key>elapsed_ns</key><integer>1000000000</integer><key>processor</key><dict><key>package_watts</key><real>12.5</real></dict></dict></plist>';
    assert.deepEqual(parsePowerSample(xml, parse), { elapsed_ms: 1000, watts: { package: 12.5 } });
  });
  it('refuses what powermetrics does not write: no elapsed_ns, negative or text power, no power at all, not a plist', () => {
    const wrap = (inner: string) => `<plist version="1.0"><dict>${inner}</dict></plist>`;
    assert.throws(() => parsePowerSample(wrap('<key>processor</key><dict><key>cpu_power</key><real>1</real></dict>'), parse), /elapsed_ns must be a number > 0/);
    const el = '<key>elapsed_ns</key><integer>100000000</integer>';
    assert.throws(() => parsePowerSample(wrap(`${el}<key>processor</key><dict><key>cpu_power</key><real>-5</real></dict>`), parse), /processor\.cpu_power must be a number >= 0/);
    assert.throws(() => parsePowerSample(wrap(`${el}<key>processor</key><dict><key>cpu_power</key><string>lots</string></dict>`), parse), /cpu_power must be a number/);
    assert.throws(() => parsePowerSample(wrap(`${el}<key>processor</key><dict><key>gpu_power</key><real>1e12</real></dict>`), parse), /gpu_power = 1000000000000 is over 10 kW/);
    assert.throws(() => parsePowerSample(wrap(`${el}<key>processor</key><dict><key>clusters</key><array/></dict>`), parse), /no power figure/);
    assert.throws(() => parsePowerSample(wrap(el), parse), /no processor dictionary/);
    assert.throws(() => parsePowerSample('<?xml version="1.0"?><plist><dict><key>elapsed_ns</key>', parse), /not a plist/);
  });
  it('integrates each sample’s power over the part of it inside the window', () => {
    const samples = docs.map((d, i) => ({ ...parsePowerSample(d, parse), end_ms: 100 * (i + 1) }));
    // Window [50, 200]: half of sample 1 (1.7355 W × 50 ms) + all of sample 2 (5.95625 W × 100 ms)… on the clock
    // the samples are placed at [0, 100] and [100, 200] by their arrival; elapsed ≈ 100 ms each.
    const r = integrateSamples(samples.map((s) => ({ ...s, elapsed_ms: 100 })), 50, 200);
    assert.equal(r.covered_ms, 150);
    assert.ok(Math.abs(r.by_domain_j.cpu! - (1.523 * 0.05 + 4.89025 * 0.1)) < 1e-12);
    assert.ok(Math.abs(r.by_domain_j.gpu! - (0.2125 * 0.05 + 1.03 * 0.1)) < 1e-12);
    // A gap in the samples shows as coverage below the window.
    assert.equal(integrateSamples([{ end_ms: 100, elapsed_ms: 100, watts: { cpu: 1 } }], 50, 300).covered_ms, 50);
  });
});

describe('powermetrics: a fake powermetrics on PATH', () => {
  it('integrates the sampled power over a window, per domain, labelled powermetrics, floor = interval', async () => {
    process.env.FAKE_PM_MODE = 'ok';
    process.env.FAKE_PM_CPU_MW = '3000';
    const m = onMac(20);
    try {
      const p = await m.probe();
      assert.ok(p.available, p.available ? '' : p.reason);
      assert.equal(m.floor_ms, 20);
      const w = await m.start();
      await sleep(400);
      const r = await w.stop();
      assert.equal(r.source, 'powermetrics');
      assert.deepEqual(Object.keys(r.by_domain).sort(), ['ane', 'cpu', 'gpu']);
      for (const d of Object.values(r.by_domain)) assert.equal(d.source, 'powermetrics');
      // Constant power: the integral is power × the window, up to the jitter with which samples arrive.
      const near = (got: number | null, want: number) => got !== null && Math.abs(got - want) <= 0.25 * want;
      assert.ok(near(r.by_domain.cpu!.joules, (3 * r.window_ms) / 1000), `${r.by_domain.cpu!.joules} J over ${r.window_ms} ms`);
      assert.ok(near(r.by_domain.gpu!.joules, (0.5 * r.window_ms) / 1000), `${r.by_domain.gpu!.joules} J over ${r.window_ms} ms`);
      assert.equal(r.by_domain.ane!.joules, 0);
      assert.equal(r.below_floor, false);
      const short = await m.start();
      const rs = await short.stop();
      assert.equal(rs.below_floor, rs.window_ms < 20);
    } finally {
      await m.close?.();
    }
  });

  it('without root: unavailable, saying powermetrics needs root and how to fix it', async () => {
    process.env.FAKE_PM_MODE = 'nonroot';
    const m = onMac();
    const p = await m.probe();
    await m.close?.();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : `${p.reason} | ${p.fix}`, /powermetrics needs root: powermetrics must be invoked as the superuser \| run joulebench with sudo/);
  });

  it('output it cannot read: unavailable, never a figure', async () => {
    process.env.FAKE_PM_MODE = 'garbage';
    const m = onMac();
    const p = await m.probe();
    await m.close?.();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /output not understood: a sample was refused: not a plist/);
  });

  it('powermetrics dies mid-run: the window that outlives it reads null with the reason', async () => {
    process.env.FAKE_PM_MODE = 'die';
    const m = onMac(20);
    try {
      assert.ok((await m.probe()).available);
      const w = await m.start();
      await sleep(200);
      const r = await w.stop();
      assert.equal(r.joules, null);
      assert.match(r.warnings?.join(' ') ?? '', /samples cover \d+% of the window \(powermetrics exited \(code 0\)\)/);
    } finally {
      await m.close?.();
    }
  });

  it('not on macOS and no command given: unavailable without spawning anything', async () => {
    const p = await createPowermetricsMeter({ platform: 'linux' }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /macOS-only \(this is linux\)/);
  });

  it('not installed: unavailable, saying so', async () => {
    const p = await createPowermetricsMeter({ command: join(dir, 'no-such-powermetrics') }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /not found on PATH/);
  });
});

meterContract('powermetrics (fake executable)', async () => {
  process.env.FAKE_PM_MODE = 'ok';
  process.env.FAKE_PM_CPU_MW = '2000';
  return { meter: onMac(10) };
});
