import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { INTEL_ONE_PACKAGE, writePowercapTree } from '../meters/powercap-tree.js';

const BIN = new URL('../../bin/joulebench.js', import.meta.url).pathname;

// Runs record themselves in the history: keep it in a tmp dir, never the user's ~/.joulebench.
const home = mkdtempSync(join(tmpdir(), 'jb-meter-home-'));
after(() => rmSync(home, { recursive: true, force: true }));

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home, ...env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A node one-liner that adds `uj` to the fake package counter (as work would), then exits with `code`. */
function advance(root: string, uj: number, code = 0): string[] {
  const path = join(root, 'intel-rapl:0', 'energy_uj');
  return [
    process.execPath,
    '-e',
    `const fs = require('fs'); const p = ${JSON.stringify(path)}; const v = Number(fs.readFileSync(p, 'utf8')) + ${uj};
     fs.writeFileSync(p + '.tmp', String(v)); fs.renameSync(p + '.tmp', p); console.log('child-out'); process.exit(${code});`,
  ];
}

describe('joulebench meter -- CMD', () => {
  let tree: ReturnType<typeof writePowercapTree>;
  before(() => {
    assert.ok(existsSync(new URL('../../dist/cli/bin.js', import.meta.url)), 'run `npm run build` first (npm test does)');
    tree = writePowercapTree([...INTEL_ONE_PACKAGE.map((z) => ({ ...z, energy_uj: 1_000_000 }))]);
  });
  after(() => tree.cleanup());

  it('--json: one JSON object on stdout; the exit code passes through; the command’s stdout goes to stderr', () => {
    const r = cli(['meter', '--meter', 'rapl', '--powercap-root', tree.root, '--no-idle', '--json', '--', ...advance(tree.root, 5_000_000, 4)]);
    assert.equal(r.code, 4, r.stderr);
    const m = JSON.parse(r.stdout) as Record<string, unknown> & { by_domain: Record<string, Record<string, unknown>>; idle: { status: string } };
    assert.equal(m.format, 'joulebench-meter/1');
    assert.equal(m.exit_code, 4);
    assert.equal(m.gross_joules, 5);
    assert.equal(m.source, 'rapl');
    assert.deepEqual(m.by_domain['package-0'], { gross_joules: 5, net_joules: null, source: 'rapl', idle_watts: null });
    assert.equal(m.idle.status, 'skipped');
    assert.equal(m.net_joules, null, 'no idle window: net is unknown, not gross');
    assert.ok(typeof m.wall_ms === 'number' && m.wall_ms > 0);
    assert.ok(m.cpu_ms === null || (typeof m.cpu_ms === 'number' && m.cpu_ms >= 0));
    assert.match(r.stderr, /child-out/);
    assert.doesNotMatch(r.stdout, /^child-out$/m);
  });

  it('the table: wall, CPU, gross and net per domain with source labels, idle measured first', () => {
    const r = cli(['meter', '--meter', 'rapl', '--idle-ms', '50', '--', ...advance(tree.root, 2_000_000)], { JOULEBENCH_POWERCAP_ROOT: tree.root });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /child-out/, "without --json the command's stdout is its own");
    assert.match(r.stderr, /exit code\s+0/);
    assert.match(r.stderr, /wall\s+[\d.]+ ms/);
    assert.match(r.stderr, /CPU \(command \+ waited children\)\s+\d+ ms/);
    // The idle window saw a still counter (0 W), so net equals gross here.
    assert.match(r.stderr, /package-0\s+2\.00 J\s+2\.00 J\s+0\.00 W\s+rapl/);
    assert.match(r.stderr, /total\s+2\.00 J\s+2\.00 J/);
  });

  it('a signal is reported as 128 + its number', () => {
    const r = cli(['meter', '--meter', 'estimate', '--', 'sh', '-c', 'kill -TERM $$']);
    assert.equal(r.code, 143, r.stderr);
    assert.match(r.stderr, /SIGTERM/);
  });

  it('a command that does not exist: 127, said in one line, and no energy (it never ran)', () => {
    const r = cli(['meter', '--meter', 'estimate', '--no-idle', '--json', '--', 'joulebench-no-such-command']);
    assert.equal(r.code, 127);
    assert.match(r.stderr, /cannot run "joulebench-no-such-command": ENOENT/);
    const m = JSON.parse(r.stdout) as { gross_joules: unknown; net_joules: unknown; source: string; by_domain: object };
    assert.equal(m.gross_joules, null);
    assert.equal(m.net_joules, null);
    assert.equal(m.source, 'none');
    assert.deepEqual(m.by_domain, {});
  });

  it("the estimate counts the command's CPU only, not joulebench's own", () => {
    const r = cli(['meter', '--meter', 'estimate', '--no-idle', '--json', '--', 'sleep', '0.2']);
    assert.equal(r.code, 0, r.stderr);
    const m = JSON.parse(r.stdout) as { gross_joules: number; cpu_ms: number | null };
    assert.ok(m.cpu_ms !== null, 'this test needs /proc');
    assert.equal(m.gross_joules, (m.cpu_ms / 1000) * 10, `${m.gross_joules} J for ${m.cpu_ms} ms of the command's CPU at 10 W`);
  });

  it('--meter model is refused for a bare command (it would measure nothing), exit 2', () => {
    const r = cli(['meter', '--meter', 'model', '--', 'true']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--meter model: a bare command reports no energy/);
  });

  it('an unreadable meter is an error, never a silent estimate', () => {
    const r = cli(['meter', '--meter', 'rapl', '--powercap-root', join(tree.root, 'nope'), '--', 'true']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^joulebench: meter rapl cannot read here: no powercap tree/m);
  });

  it('auto picks RAPL from JOULEBENCH_POWERCAP_ROOT', () => {
    const withRapl = cli(['meter', '--no-idle', '--json', '--', 'true'], { JOULEBENCH_POWERCAP_ROOT: tree.root });
    assert.equal(withRapl.code, 0, withRapl.stderr);
    assert.equal((JSON.parse(withRapl.stdout) as { meter: string }).meter, 'auto(rapl)');
  });
});

describe('joulebench run --meter', () => {
  let tree: ReturnType<typeof writePowercapTree>;
  let dir: string;
  before(() => {
    tree = writePowercapTree(INTEL_ONE_PACKAGE);
    dir = mkdtempSync(join(tmpdir(), 'jb-run-meter-'));
  });
  after(() => {
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rapl: the report names the source, gross/net and the floor count; the receipt lists domains and idle power', () => {
    const out = join(dir, 'rapl.json');
    const r = cli(['run', '--suite', 'router', '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '30', '-q', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    assert.equal(rep.meter, 'rapl');
    assert.equal(rep.energy_source, 'rapl');
    assert.equal(rep.gross_source, 'rapl');
    assert.equal(rep.idle, 'measured');
    assert.equal(rep.idle_watts, 0, 'a still fake counter idles at 0 W');
    assert.equal(rep.gross_joules, 0);
    assert.equal(rep.net_joules, 0);
    assert.ok(typeof rep.suite_window_ms === 'number');
    // Cascade cases take microseconds: most sit under RAPL's 1 ms floor and are counted.
    assert.ok((rep.below_floor_count as number) > 0);
    const receipt = JSON.parse(readFileSync(join(dir, 'rapl.receipt.json'), 'utf8')) as {
      meter: { domains: { domain: string }[]; powercap_root: string; max_energy_range_uj: Record<string, number> };
      energy: { idle: { status: string; watts: number; window_ms: number }; suite_window: { source: string } };
    };
    assert.deepEqual(receipt.meter.domains.map((d) => d.domain), ['package-0']);
    assert.equal(receipt.meter.powercap_root, tree.root);
    assert.equal(receipt.energy.idle.status, 'measured');
    assert.equal(receipt.energy.idle.watts, 0);
    assert.ok(receipt.energy.idle.window_ms >= 30);
    assert.equal(receipt.energy.suite_window.source, 'rapl');
  });

  it('estimate: coefficients in the receipt, labelled estimate, no idle subtracted', () => {
    const out = join(dir, 'est.json');
    const r = cli(['run', '--suite', 'router', '--meter', 'estimate', '-q', '-o', out], { JOULEBENCH_ACTIVE_WATTS: '25' });
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    assert.equal(rep.energy_source, 'estimate');
    assert.equal(rep.idle, 'marginal');
    assert.equal(rep.net_joules, rep.gross_joules);
    const receipt = JSON.parse(readFileSync(join(dir, 'est.receipt.json'), 'utf8')) as { meter: { coefficients: unknown } };
    assert.deepEqual(receipt.meter.coefficients, { cpu_watts_per_core: null, active_watts: 25 });
  });

  it('energy_uj unreadable: the run stops with the reason (exit 1)', () => {
    const bad = writePowercapTree(INTEL_ONE_PACKAGE);
    try {
      rmSync(join(bad.root, 'intel-rapl:0', 'energy_uj'));
      mkdirSync(join(bad.root, 'intel-rapl:0', 'energy_uj'));
      const r = cli(['run', '--suite', 'router', '--meter', 'rapl', '--powercap-root', bad.root, '-q', '-o', join(dir, 'bad.json')]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /meter rapl cannot read here: cannot read .*energy_uj \(EISDIR\)/);
    } finally {
      bad.cleanup();
    }
  });

  it('default (auto) on a machine without counters: the model energy, and the report says which', (t) => {
    if (existsSync('/sys/class/powercap') || existsSync('/proc/driver/nvidia/version')) return t.skip('this machine has counters: auto would use them');
    const out = join(dir, 'auto.json');
    const r = cli(['run', '--suite', 'router', '-q', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    assert.equal(rep.meter, 'auto(model)');
    assert.equal(rep.energy_source, 'model');
    assert.equal(rep.gross_joules, rep.total_joules);
  });
});
