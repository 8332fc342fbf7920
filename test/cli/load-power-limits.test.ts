import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';

/**
 * `run --request-rate R --gpu-power-limits` against test/meters/fixtures/fake-nvml.c compiled here: it logs
 * every limit it is set to, and its energy counter draws each GPU's current limit, so an arm's power is its limit.
 */
const cc = spawnSync('cc', ['--version'], { encoding: 'utf8' });
const NO_CC = cc.status === 0 ? false : 'no C compiler (cc) on this machine: the fake libnvidia-ml.so cannot be built';

describe('run --request-rate --gpu-power-limits (fake libnvidia-ml.so)', { skip: NO_CC }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-load-pl-'));
  const lib = join(dir, 'libnvidia-ml.so.1');
  const state = join(dir, 'state');
  const log = join(dir, 'log');
  let fast: LoadServer;
  // Never answers: a run is still in its first arm when the test interrupts it.
  const hang = http.createServer(() => undefined);
  let hangUrl = '';
  before(async () => {
    const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', lib, 'test/meters/fixtures/fake-nvml.c'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    writeFileSync(state, 'gpu GPU-aaaa 300000 100000 350000\ngpu GPU-bbbb 300000 100000 350000\n');
    fast = await startLoadServer(() => ({ ttft_ms: 20, tpot_ms: 10, tokens: 4, answer: 'x' }));
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    await fast.close();
    hang.closeAllConnections();
    hang.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = () => ({ JOULEBENCH_NVML_LIBRARY: lib, FAKE_NVML_STATE: state, FAKE_NVML_LOG: log, CUDA_VISIBLE_DEVICES: '0', JOULEBENCH_HOME: dir });
  const args = (url: string) => ['run', '--target', 'openai', '--endpoint', url, '--model', 'm', '--suite', 'router', '--limit', '6', '--request-rate', '40', '--max-concurrency', '2', '--num-requests', '12', '--meter', 'nvml', '--idle-ms', '50', '--no-history'];
  const setCalls = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : []);

  it('each limit is one load run: set before it, the original restored after; the document compares J/output token and tok/s', async () => {
    rmSync(log, { force: true });
    const out = join(dir, 'pl.json');
    const r = await cli([...args(fast.url), '--gpu-power-limits', '200,250', '-o', out], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(setCalls(), ['set 0 200000', 'set 0 300000', 'set 0 250000', 'set 0 300000']);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(doc.format, 'joulebench-gpu-power-limits/1');
    assert.deepEqual(doc.gpu_power_limits_w, [200, 250]);
    assert.deepEqual(doc.reports, ['pl.pl-200W.json', 'pl.pl-250W.json']);
    assert.deepEqual(doc.gpus.gpus.map((g: { uuid: string; original_limit_w: number }) => [g.uuid, g.original_limit_w]), [['GPU-aaaa', 300]]);
    assert.deepEqual(doc.arms.map((a: { gpu_power_limit_w: number }) => a.gpu_power_limit_w), [200, 250]);
    for (const a of doc.arms) {
      assert.equal(a.energy_source, 'nvml');
      assert.ok(a.joules_per_output_token > 0 && a.output_throughput > 0, JSON.stringify(a));
    }
    // The fake GPU draws its limit: the 250 W arm averages 50 W more than the 200 W one.
    const more = doc.arms[1].avg_power_w - doc.arms[0].avg_power_w;
    assert.ok(Math.abs(more - 50) < 5, `250 W arm − 200 W arm = ${more} W`);
    assert.ok(existsSync(join(dir, 'pl.pl-250W.results.jsonl')));
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'pl.pl-250W.receipt.json'), 'utf8')).labels, { gpu_power_limit_w: '250' });
    assert.match(r.stderr, /GPU limit W/);
  });

  it('a limit outside the GPU\'s range, or no single --request-rate, is refused before anything is set', async () => {
    rmSync(log, { force: true });
    const bad = await cli([...args(fast.url), '--gpu-power-limits', '200,400'], { env: env() });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--gpu-power-limits: 400 W is outside GPU 0's range 100–350 W/);
    const two = await cli([...args(fast.url).map((a) => (a === '40' ? '40,80' : a)), '--gpu-power-limits', '200'], { env: env() });
    assert.equal(two.code, 2, two.stderr);
    assert.match(two.stderr, /--gpu-power-limits .*one rate/);
    assert.deepEqual(setCalls(), []);
  });

  it('Ctrl-C mid-arm: the original limit is set back before the process exits', async () => {
    rmSync(log, { force: true });
    const child = spawn(process.execPath, [BIN, ...args(hangUrl), '--gpu-power-limits', '150', '-q'], {
      env: { ...process.env, NO_COLOR: '1', ...env() },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 600 && setCalls().length === 0; i++) await sleep(50);
    assert.deepEqual(setCalls(), ['set 0 150000'], `the arm never started: ${stderr}`);
    await sleep(500); // inside the arm, its requests held by the server
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.deepEqual(setCalls(), ['set 0 150000', 'set 0 300000']);
  });
});
