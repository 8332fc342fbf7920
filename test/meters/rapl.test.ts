import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { counterDelta } from '../../src/meters/rapl/counter.js';
import { meterContract } from './contract.js';
import { INTEL_ONE_PACKAGE, setEnergy, writePowercapTree, type FakeZone } from './powercap-tree.js';

/** Probes a meter on a fresh tree and returns what it selected. */
async function domainsOf(zones: FakeZone[], dram = false): Promise<{ domains: string[]; skipped: string[]; mode: unknown }> {
  const tree = writePowercapTree(zones);
  const meter = createRaplMeter({ root: tree.root, dram });
  try {
    const p = await meter.probe();
    assert.ok(p.available, p.available ? '' : p.reason);
    const d = meter.describe() as { domains: { domain: string }[]; skipped: string[]; mode: unknown };
    return { domains: d.domains.map((x) => x.domain), skipped: d.skipped, mode: d.mode };
  } finally {
    await meter.close?.();
    tree.cleanup();
  }
}

/** Opens a window, applies counter values in order (polling between), and returns the reading. */
async function windowOver(zones: FakeZone[], steps: [string, number][], opts: { dram?: boolean } = {}) {
  const tree = writePowercapTree(zones);
  const meter = createRaplMeter({ root: tree.root, dram: opts.dram ?? false, poll_ms: 1_000_000 });
  try {
    assert.ok((await meter.probe()).available);
    const w = await meter.start();
    for (const [entry, v] of steps) setEnergy(tree.root, entry, v);
    return { reading: await w.stop(), describe: meter.describe() };
  } finally {
    await meter.close?.();
    tree.cleanup();
  }
}

describe('rapl: which zones are summed (DESIGN.md domain rules)', () => {
  it('one package: package-0 only, never core or uncore', async () => {
    const s = await domainsOf(INTEL_ONE_PACKAGE);
    assert.deepEqual(s.domains, ['package-0']);
    assert.ok(s.skipped.some((l) => l.includes('(core)') && l.includes('never summed')));
    assert.ok(s.skipped.some((l) => l.includes('(uncore)')));
  });

  it('two packages: both, in order', async () => {
    const s = await domainsOf([
      { entry: 'intel-rapl:1', name: 'package-1' },
      { entry: 'intel-rapl:0', name: 'package-0' },
      { entry: 'intel-rapl:1:0', name: 'core' },
    ]);
    assert.deepEqual(s.domains, ['package-0', 'package-1']);
  });

  it('package + dram: dram only when asked, labelled by its package', async () => {
    const zones: FakeZone[] = [
      { entry: 'intel-rapl:0', name: 'package-0' },
      { entry: 'intel-rapl:0:0', name: 'core' },
      { entry: 'intel-rapl:0:1', name: 'dram' },
      { entry: 'intel-rapl:1', name: 'package-1' },
      { entry: 'intel-rapl:1:0', name: 'dram' },
    ];
    const without = await domainsOf(zones);
    assert.deepEqual(without.domains, ['package-0', 'package-1']);
    assert.ok(without.skipped.some((l) => l.includes('--rapl-dram')));
    const withDram = await domainsOf(zones, true);
    assert.deepEqual(withDram.domains, ['dram-0', 'dram-1', 'package-0', 'package-1']);
  });

  it('psys present: psys instead of the packages, never both (and no dram even if asked)', async () => {
    const s = await domainsOf(
      [
        { entry: 'intel-rapl:0', name: 'package-0' },
        { entry: 'intel-rapl:0:0', name: 'core' },
        { entry: 'intel-rapl:0:1', name: 'uncore' },
        { entry: 'intel-rapl:0:2', name: 'dram' },
        { entry: 'intel-rapl:1', name: 'psys' },
      ],
      true,
    );
    assert.deepEqual(s.domains, ['psys']);
    assert.equal(s.mode, 'psys');
    assert.ok(s.skipped.some((l) => l.startsWith('intel-rapl:0 (package-0)') && l.includes('never both')));
  });

  it('an mmio duplicate of the package is counted once (the MSR zone wins)', async () => {
    const tree = writePowercapTree([
      { entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1000 },
      { entry: 'intel-rapl-mmio:0', name: 'package-0', energy_uj: 1000 },
    ]);
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
    try {
      assert.ok((await meter.probe()).available);
      const d = meter.describe() as { domains: { zone: string }[]; skipped: string[] };
      assert.deepEqual(d.domains.map((x) => x.zone), ['intel-rapl:0']);
      assert.ok(d.skipped.some((l) => l.startsWith('intel-rapl-mmio:0') && l.includes('counted once')));
      // The same energy seen through both interfaces is summed once.
      const w = await meter.start();
      setEnergy(tree.root, 'intel-rapl:0', 3_001_000);
      setEnergy(tree.root, 'intel-rapl-mmio:0', 3_001_000);
      const r = await w.stop();
      assert.equal(r.joules, 3);
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it('an AMD-style tree (package and per-core zones, no dram): the package alone without --rapl-dram', async () => {
    const s = await domainsOf([
      { entry: 'intel-rapl:0', name: 'package-0', max_uj: 65532610987 },
      { entry: 'intel-rapl:0:0', name: 'core' },
    ]);
    assert.deepEqual(s.domains, ['package-0']);
  });

  it('--rapl-dram where no dram zone exists: unavailable, one line saying so (never package energy passed off as package+dram)', async () => {
    const tree = writePowercapTree([
      { entry: 'intel-rapl:0', name: 'package-0' },
      { entry: 'intel-rapl:0:0', name: 'core' },
    ]);
    const meter = createRaplMeter({ root: tree.root, dram: true });
    try {
      const p = await meter.probe();
      assert.equal(p.available, false);
      assert.ok(!p.available);
      assert.match(p.reason, /^--rapl-dram: no dram zone under .*zones: intel-rapl:0 \(package-0\), intel-rapl:0:0 \(core\)\)$/);
      assert.doesNotMatch(p.reason, /\n/);
      assert.match(p.fix ?? '', /without --rapl-dram/);
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it('--rapl-dram reads a dram zone nested under its package (the device-tree layout: intel-rapl:0/intel-rapl:0:2)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'jb-powercap-nested-'));
    const zone = (dir: string, name: string, uj: number): void => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'name'), `${name}\n`);
      writeFileSync(join(dir, 'energy_uj'), `${uj}\n`);
      writeFileSync(join(dir, 'max_energy_range_uj'), '262143328850\n');
    };
    // The package at the top; its subzones only inside it, as /sys/devices/virtual/powercap/intel-rapl has them.
    zone(join(root, 'intel-rapl:0'), 'package-0', 1_000_000);
    zone(join(root, 'intel-rapl:0', 'intel-rapl:0:0'), 'core', 0);
    zone(join(root, 'intel-rapl:0', 'intel-rapl:0:2'), 'dram', 5_000_000);
    const meter = createRaplMeter({ root, dram: true, poll_ms: 10_000 });
    try {
      const p = await meter.probe();
      assert.ok(p.available, p.available ? '' : p.reason);
      const d = meter.describe() as { domains: { domain: string; zone: string }[] };
      assert.deepEqual(d.domains.map((x) => `${x.domain}@${x.zone}`), ['dram-0@intel-rapl:0:2', 'package-0@intel-rapl:0']);
      const w = await meter.start();
      writeFileSync(join(root, 'intel-rapl:0', 'energy_uj'), '3000000\n');
      writeFileSync(join(root, 'intel-rapl:0', 'intel-rapl:0:2', 'energy_uj'), '5500000\n');
      const r = await w.stop();
      assert.equal(r.by_domain['dram-0']?.joules, 0.5);
      assert.equal(r.joules, 2.5);
    } finally {
      await meter.close?.();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a zone listed both flat and nested (the /sys/class/powercap symlinks) counts once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'jb-powercap-both-'));
    for (const dir of [join(root, 'intel-rapl:0'), join(root, 'intel-rapl:0:2'), join(root, 'intel-rapl:0', 'intel-rapl:0:2')]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'name'), dir.endsWith(':2') ? 'dram\n' : 'package-0\n');
      writeFileSync(join(dir, 'energy_uj'), '0\n');
      writeFileSync(join(dir, 'max_energy_range_uj'), '262143328850\n');
    }
    const meter = createRaplMeter({ root, dram: true });
    try {
      assert.ok((await meter.probe()).available);
      const d = meter.describe() as { domains: { domain: string }[]; skipped: string[] };
      assert.deepEqual(d.domains.map((x) => x.domain), ['dram-0', 'package-0']);
      assert.deepEqual(d.skipped, []);
    } finally {
      await meter.close?.();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('no package or psys zone: unavailable, saying so', async () => {
    const tree = writePowercapTree([{ entry: 'intel-rapl:0:0', name: 'core' }]);
    after(tree.cleanup);
    const p = await createRaplMeter({ root: tree.root }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /no package or psys zone/);
  });

  it('a missing root: unavailable, with the --powercap-root fix', async () => {
    const p = await createRaplMeter({ root: join(tmpdir(), 'jb-no-such-powercap') }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : `${p.reason} ${p.fix}`, /--powercap-root/);
  });
});

describe('rapl: windows', () => {
  it('sums the deltas of every selected domain, in joules, labelled rapl', async () => {
    const { reading } = await windowOver(
      [
        { entry: 'intel-rapl:0', name: 'package-0', energy_uj: 10_000_000 },
        { entry: 'intel-rapl:0:0', name: 'core', energy_uj: 5_000_000 },
        { entry: 'intel-rapl:1', name: 'package-1', energy_uj: 20_000_000 },
      ],
      [
        ['intel-rapl:0', 12_500_000],
        ['intel-rapl:0:0', 9_000_000], // core: never summed
        ['intel-rapl:1', 21_000_000],
      ],
    );
    assert.deepEqual(reading.by_domain, { 'package-0': { joules: 2.5, source: 'rapl' }, 'package-1': { joules: 1, source: 'rapl' } });
    assert.equal(reading.joules, 3.5);
    assert.equal(reading.source, 'rapl');
  });

  it('package + dram when asked: both domains in the total', async () => {
    const { reading } = await windowOver(
      [
        { entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 },
        { entry: 'intel-rapl:0:2', name: 'dram', energy_uj: 0 },
      ],
      [
        ['intel-rapl:0', 4_000_000],
        ['intel-rapl:0:2', 500_000],
      ],
      { dram: true },
    );
    assert.deepEqual(Object.keys(reading.by_domain), ['dram-0', 'package-0']);
    assert.equal(reading.joules, 4.5);
  });

  it('psys present: the window is psys alone (package energy is not added on top)', async () => {
    const { reading } = await windowOver(
      [
        { entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 },
        { entry: 'intel-rapl:1', name: 'psys', energy_uj: 0 },
      ],
      [
        ['intel-rapl:0', 3_000_000],
        ['intel-rapl:1', 7_000_000],
      ],
    );
    assert.deepEqual(reading.by_domain, { psys: { joules: 7, source: 'rapl' } });
    assert.equal(reading.joules, 7);
  });

  it('a wrap inside a window is added through max_energy_range_uj, never negative', async () => {
    const { reading } = await windowOver(
      [{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 999_000_000, max_uj: 1_000_000_000 }],
      [['intel-rapl:0', 2_000_000]],
    );
    assert.equal(reading.joules, 3); // 1 J to the wrap, 2 J after it
  });

  it('an unreadable max drops the wrapped sample with a warning instead of summing a negative delta', async () => {
    const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 900_000, max_uj: 'unreadable' }]);
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
    try {
      const p = await meter.probe();
      assert.ok(p.available, 'an unreadable max does not make the meter unavailable');
      const d = meter.describe() as { warnings: string[]; max_energy_range_uj: Record<string, unknown> };
      assert.equal(d.max_energy_range_uj['package-0'], null);
      assert.ok(d.warnings.some((l) => l.includes('EISDIR') && l.includes('max_energy_range_uj')));
      const w = await meter.start();
      setEnergy(tree.root, 'intel-rapl:0', 1_900_000); // +1 J, no wrap: counted
      const inner = await meter.start(); // polls: sees 1.9 J
      await inner.stop();
      setEnergy(tree.root, 'intel-rapl:0', 400_000); // went down: a wrap of unknown size
      const r = await w.stop();
      assert.equal(r.joules, 1);
      assert.ok(r.joules >= 0);
      assert.ok(r.warnings?.some((l) => l.includes('dropped')), JSON.stringify(r.warnings));
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it('two wraps inside one window are both counted: a writer process advances the counter while the poller runs', async () => {
    const max_uj = 1_000_000;
    const start_uj = 900_000;
    const step_uj = 150_000;
    const steps = 14; // 2.1 J: from 0.9 through two wraps (at 1.0 and 2.0 J) to 3.0 J
    const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: start_uj, max_uj }]);
    const writer = join(tree.root, 'writer.mjs');
    // The writer advances the counter by a fixed step every 40 ms (one wrap per ~7 steps = 280 ms),
    // writing atomically as sysfs would; it starts when told and says when it is done.
    writeFileSync(
      writer,
      `import { writeFileSync, renameSync } from 'node:fs';
       const [path, start, step, steps, max] = process.argv.slice(2).map((v, i) => i === 0 ? v : Number(v));
       let v = start;
       process.stdin.once('data', async () => {
         for (let i = 0; i < steps; i++) {
           await new Promise((r) => setTimeout(r, 40));
           v = (v + step) % max;
           writeFileSync(path + '.tmp', v + '\\n'); renameSync(path + '.tmp', path);
         }
         process.stdout.write('done\\n');
         process.stdin.destroy();
       });`,
    );
    const run = async (poll_ms: number): Promise<number | null> => {
      setEnergy(tree.root, 'intel-rapl:0', start_uj);
      const meter = createRaplMeter({ root: tree.root, poll_ms });
      assert.ok((await meter.probe()).available);
      const child = spawn(process.execPath, [writer, join(tree.root, 'intel-rapl:0', 'energy_uj'), String(start_uj), String(step_uj), String(steps), String(max_uj)], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const done = new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (b: Buffer) => b.toString().includes('done') && resolve());
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
      });
      const w = await meter.start();
      child.stdin.write('go\n');
      await done;
      const r = await w.stop();
      await meter.close?.();
      return r.joules;
    };
    try {
      assert.equal(await run(5), (steps * step_uj) / 1e6);
      // Control: with polling slower than the wraps, the window sees only its edges and reads low.
      // This is why the poller exists, and it shows the test above can fail.
      const edgesOnly = await run(1_000_000);
      assert.ok(edgesOnly !== null && edgesOnly < (steps * step_uj) / 1e6 - 0.5, `edges-only read ${edgesOnly} J`);
    } finally {
      tree.cleanup();
    }
  });

  it('the background poller is unref-ed: an open window does not keep the process alive', async (t) => {
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    after(tree.cleanup);
    const dist = new URL('../../dist/meters/rapl/index.js', import.meta.url).pathname;
    if (!existsSync(dist)) return t.skip('needs the built dist/ (npm test builds it first)');
    const code = `const { createRaplMeter } = await import(${JSON.stringify(dist)});
      const m = createRaplMeter({ root: ${JSON.stringify(tree.root)}, poll_ms: 5 });
      await m.start(); console.log('opened');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = await Promise.race([
      new Promise<number | null>((r) => child.once('exit', r)),
      sleep(8000).then(() => 'hung' as const),
    ]);
    if (exited === 'hung') child.kill();
    assert.equal(exited, 0);
    assert.match(out, /opened/);
  });
});

describe('rapl: an unreadable energy_uj makes the meter unavailable, with the reason and the fix', () => {
  it('EACCES (root-only since CVE-2020-8694): simulated by an injected reader that fails as the kernel does for non-root', async () => {
    // Tests run as root, so chmod cannot make a file unreadable here. The reader below throws the very
    // error fs.readFileSync throws for a 0400 root-owned file read by another user.
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    after(tree.cleanup);
    const read = (path: string): string => {
      if (path.endsWith('energy_uj')) {
        throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES', errno: -13, syscall: 'open', path });
      }
      return readFileSync(path, 'utf8');
    };
    const meter = createRaplMeter({ root: tree.root, read });
    const p = await meter.probe();
    assert.equal(p.available, false);
    if (p.available) return;
    assert.match(p.reason, /readable by root only/);
    assert.match(p.reason, /CVE-2020-8694/);
    assert.match(p.fix ?? '', /run as root|chmod|udev/);
    await assert.rejects(meter.start(), /cannot read/);
  });

  it('a real permission error: the probe run as user nobody against a root-only energy_uj', async (t) => {
    const dist = new URL('../../dist/meters/rapl/index.js', import.meta.url).pathname;
    if (process.getuid?.() !== 0) return t.skip('needs root to start a child as another user');
    if (!existsSync(dist)) return t.skip('needs the built dist/ (npm run build; npm test builds it first)');
    const base = mkdtempSync(join(tmpdir(), 'jb-perm-'));
    chmodSync(base, 0o755);
    const tree = writePowercapTree(INTEL_ONE_PACKAGE, base);
    try {
      chmodSync(tree.root, 0o755);
      for (const e of ['intel-rapl:0', 'intel-rapl:0:0', 'intel-rapl:0:1']) chmodSync(join(tree.root, e), 0o755);
      chmodSync(join(tree.root, 'intel-rapl:0', 'energy_uj'), 0o400);
      for (const e of ['intel-rapl:0', 'intel-rapl:0:0', 'intel-rapl:0:1']) chmodSync(join(tree.root, e, 'name'), 0o444);
      const code = `const { createRaplMeter } = await import(${JSON.stringify(dist)});
        console.log(JSON.stringify(await createRaplMeter({ root: ${JSON.stringify(tree.root)} }).probe()));`;
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', code], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'pipe'] });
        let s = '';
        let e = '';
        child.stdout.on('data', (b: Buffer) => (s += b.toString()));
        child.stderr.on('data', (b: Buffer) => (e += b.toString()));
        child.once('error', reject);
        child.once('exit', (c) => (c === 0 ? resolve(s) : reject(new Error(`child exited ${c}: ${e}`))));
      }).catch((e: Error) => e);
      if (out instanceof Error) return t.skip(`could not run node as nobody here: ${out.message.split('\n')[0]}`);
      const p = JSON.parse(out) as { available: boolean; reason: string };
      assert.equal(p.available, false);
      assert.match(p.reason, /EACCES/);
      assert.match(p.reason, /CVE-2020-8694/);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a directory where energy_uj should be: unavailable, naming the error', async () => {
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    after(tree.cleanup);
    rmSync(join(tree.root, 'intel-rapl:0', 'energy_uj'));
    mkdirSync(join(tree.root, 'intel-rapl:0', 'energy_uj'));
    const p = await createRaplMeter({ root: tree.root }).probe();
    assert.equal(p.available, false);
    assert.match(p.available ? '' : p.reason, /EISDIR/);
  });
});

describe('rapl: measurement floor', () => {
  it('a window under 1 ms is flagged below_floor; 1 ms and over is not (injected clock)', async () => {
    const tree = writePowercapTree(INTEL_ONE_PACKAGE);
    after(tree.cleanup);
    let t = 0;
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000, now: () => t });
    assert.equal(meter.floor_ms, 1);
    let w = await meter.start();
    t += 0.5;
    const short = await w.stop();
    assert.equal(short.window_ms, 0.5);
    assert.equal(short.below_floor, true);
    w = await meter.start();
    t += 1;
    assert.equal((await w.stop()).below_floor, false);
    await meter.close?.();
  });
});

describe('rapl: counterDelta', () => {
  it('plain, wrapped, and dropped deltas', () => {
    assert.deepEqual(counterDelta(10, 25, 100), { delta_uj: 15 });
    assert.deepEqual(counterDelta(90, 5, 100), { delta_uj: 15 });
    assert.ok('dropped' in counterDelta(90, 5, null));
    assert.ok('dropped' in counterDelta(150, 5, 100), 'a previous value above max means max is wrong: drop');
  });
});

// The contract, on a fake tree whose counter a timer advances while windows are open (1 J per ms).
meterContract('rapl', async () => {
  const tree = writePowercapTree(INTEL_ONE_PACKAGE);
  let v = 0;
  const meter = createRaplMeter({ root: tree.root, poll_ms: 5 });
  return {
    meter,
    async work(ms) {
      const end = Date.now() + ms;
      while (Date.now() < end) {
        v += 1_000_000;
        setEnergy(tree.root, 'intel-rapl:0', v);
        await sleep(1);
      }
    },
    cleanup: tree.cleanup,
  };
});
