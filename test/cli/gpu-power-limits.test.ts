import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, cli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

/**
 * `--gpu-power-limits` against a real shared library: test/meters/fixtures/fake-nvml.c, compiled here,
 * exports NVML's power-limit and energy calls and appends every limit it is set to to a log file, so
 * the test sees set-then-restore even when the CLI was interrupted.
 */
const cc = spawnSync('cc', ['--version'], { encoding: 'utf8' });
const NO_CC = cc.status === 0 ? false : 'no C compiler (cc) on this machine: the fake libnvidia-ml.so cannot be built';

describe('infer --gpu-power-limits (fake libnvidia-ml.so)', { skip: NO_CC }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-powerlimit-'));
  const lib = join(dir, 'libnvidia-ml.so.1');
  const state = join(dir, 'state');
  const log = join(dir, 'log');
  const fast = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 5, decode_tok_s: () => 20 });
  // Loading takes a minute: a run is still in its first arm when the test interrupts it.
  const slow = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 60_000 });
  let fastUrl = '';
  let slowUrl = '';
  before(async () => {
    const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', lib, 'test/meters/fixtures/fake-nvml.c'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    writeFileSync(state, 'gpu GPU-aaaa 300000 100000 350000\ngpu GPU-bbbb 300000 100000 350000\n');
    fastUrl = await fast.start();
    slowUrl = await slow.start();
  });
  after(async () => {
    await fast.stop();
    await slow.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = () => ({ JOULEBENCH_NVML_LIBRARY: lib, FAKE_NVML_STATE: state, FAKE_NVML_LOG: log, CUDA_VISIBLE_DEVICES: '0' });
  const args = (url: string, out: string) => ['infer', '--model', 'm1', '--base-url', url, '--runs', '2', '--warmup', '0', '--cold', '1', '--num-predict', '3', '--gpu-snapshot-cmd', '', '--no-history', '--out', out];
  const setCalls = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

  it('each limit is an arm: set on the visible GPU before it, the original restored after; the table compares them', async () => {
    rmSync(log, { force: true });
    const out = join(dir, 'run.json');
    const r = await cli([...args(fastUrl, out), '--gpu-power-limits', '200,250', '--meter', 'nvml'], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    // GPU 1 is hidden by CUDA_VISIBLE_DEVICES: only GPU 0 is touched.
    assert.deepEqual(setCalls(), ['set 0 200000', 'set 0 300000', 'set 0 250000', 'set 0 300000']);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(file.arms.map((a: { id: string; gpu_power_limit_w: number }) => [a.id, a.gpu_power_limit_w]), [
      ['m1@t=default@pl=200W', 200],
      ['m1@t=default@pl=250W', 250],
    ]);
    assert.deepEqual(file.receipts.gpu_power_limits.gpus.map((g: { uuid: string; original_limit_w: number }) => [g.uuid, g.original_limit_w]), [['GPU-aaaa', 300]]);
    assert.ok(file.arms.every((a: { runs: { energy_source: string }[] }) => a.runs.every((x) => x.energy_source === 'nvml')));
    assert.match(r.stdout, /m1@t=default: by GPU power limit \(decode tok\/s median, J\/token gross median\): 200 W: 20\.00 tok\/s, \S+ J\/token; 250 W: 20\.00 tok\/s, \S+ J\/token/);
    assert.deepEqual(file.summary.thread_sweeps, [], 'one thread arm per limit: no thread sweep across limits');
  });

  it('a limit outside the GPU\'s range is refused before anything is set', async () => {
    rmSync(log, { force: true });
    const r = await cli([...args(fastUrl, join(dir, 'bad.json')), '--gpu-power-limits', '200,400', '--meter', 'none'], { env: env() });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--gpu-power-limits: 400 W is outside GPU 0's range 100–350 W/);
    assert.deepEqual(setCalls(), []);
  });

  it('Ctrl-C mid-arm: the original limit is set back before the process exits', async () => {
    rmSync(log, { force: true });
    const child = spawn(process.execPath, [BIN, ...args(slowUrl, join(dir, 'int.json')), '--gpu-power-limits', '150', '--meter', 'none'], {
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: dir, ...env() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 600 && setCalls().length === 0; i++) await sleep(50);
    assert.deepEqual(setCalls(), ['set 0 150000'], `the arm never started: ${stderr}`);
    await sleep(300); // inside the arm's cold run, waiting on the one-minute load
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.deepEqual(setCalls(), ['set 0 150000', 'set 0 300000']);
    assert.match(stderr, /interrupted/);
  });
});
