import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

/** The dollars of a run as providers bill them, and of a local system by its electricity and hardware. */
describe('prices: cached and reasoning tokens, electricity and hardware', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-prices-'));
  // What the server reports per request: 1200 prompt tokens of which 1000 cached; 80 completion of which 30 reasoning.
  const usage = { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 1000 }, completion_tokens_details: { reasoning_tokens: 30 } };
  const rapl = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }], dir);
  let counter_uj = 0;
  const ollama = new FakeOllama({
    models: { m1: { parameter_count: 1e6 } },
    decode_tok_s: () => 50,
    reply: () => 'Paris',
    // 2 J a generation on the fake RAPL counter.
    onGeneration: () => setEnergy(rapl.root, 'intel-rapl:0', (counter_uj += 2_000_000)),
  });
  let server: FakeServer;
  let ollamaUrl = '';
  const jb = (args: string[], env: Record<string, string> = {}) => cli([...args, ...(args[0] === 'run' ? ['--no-history', '--quiet'] : [])], { cwd: dir, env });
  const json = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8'));
  const cases = (f: string) => readFileSync(join(dir, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.record === 'case');

  before(async () => {
    server = await startFakeOpenAI(() => ({ kind: 'stream', text: 'Paris', usage }));
    ollamaUrl = await ollama.start();
    writeFileSync(join(dir, 'suite.json'), JSON.stringify({ name: 'capitals', version: '1', cases: [{ id: 'a', prompt: 'Capital of France?', expected: 'Paris' }, { id: 'b', prompt: 'Capital of Italy?', expected: 'Rome' }] }));
    const target = `target:\n  kind: openai\n  endpoint: "${server.url}"\n  model: m\n`;
    writeFileSync(join(dir, 'full.yaml'), `${target}prices:\n  input_usd_per_mtok: 3\n  output_usd_per_mtok: 15\n`);
    writeFileSync(join(dir, 'cached.yaml'), `${target}prices:\n  input_usd_per_mtok: 3\n  output_usd_per_mtok: 15\n  cached_input_usd_per_mtok: 0.3\n  reasoning_usd_per_mtok: 20\n`);
    writeFileSync(join(dir, 'local.yaml'), 'prices:\n  electricity_usd_per_kwh: 0.25\n');
  });
  after(async () => {
    await server.close();
    await ollama.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('bills cached prompt tokens at the cached price and reasoning tokens at theirs; without those prices, at the input and output prices', async () => {
    const full = await jb(['run', '--suite', 'suite.json', '--config', 'full.yaml', '--meter', 'model', '--out', 'full.json']);
    assert.equal(full.code, 0, full.stderr);
    const cached = await jb(['run', '--suite', 'suite.json', '--config', 'cached.yaml', '--meter', 'model', '--out', 'cached.json']);
    assert.equal(cached.code, 0, cached.stderr);
    // Per request, from the server's usage numbers.
    const fullEach = (1200 * 3 + 80 * 15) / 1e6;
    const cachedEach = (200 * 3 + 1000 * 0.3 + 50 * 15 + 30 * 20) / 1e6;
    assert.ok(Math.abs(json('full.json').total_usd - 2 * fullEach) < 1e-12, String(json('full.json').total_usd));
    assert.ok(Math.abs(json('cached.json').total_usd - 2 * cachedEach) < 1e-12, String(json('cached.json').total_usd));
    assert.equal(json('cached.json').usd_per_correct, Math.round((2 * cachedEach) * 1e9) / 1e9);
    for (const f of ['full.json', 'cached.json']) {
      const r = json(f);
      assert.equal(r.prompt_tokens, 2400);
      assert.equal(r.cached_prompt_tokens, 2000);
      assert.equal(r.reasoning_tokens, 60);
      // No electricity or hardware price: no price parts, the report's bytes as before.
      assert.equal(r.usd_energy, undefined);
    }
    for (const c of cases('cached.results.jsonl')) {
      assert.equal(c.cached_prompt_tokens, 1000);
      assert.equal(c.reasoning_tokens, 30);
      assert.ok(Math.abs(c.cost_usd - cachedEach) < 1e-12);
    }
  });

  it('prices a local system by its estimated energy (labelled estimate) and its wall time; no token price, no token part', async () => {
    const r = await jb(['run', '--suite', 'suite.json', '--target', 'ollama', '--model', 'm1', '--base-url', ollamaUrl, '--meter', 'estimate', '--config', 'local.yaml', '--hardware-usd-per-hour', '2', '--out', 'est.json']);
    assert.equal(r.code, 0, r.stderr);
    const rep = json('est.json');
    assert.equal(rep.energy_source, 'estimate');
    assert.ok(rep.total_joules > 0, String(rep.total_joules));
    assert.equal(rep.usd_energy, Math.round((rep.total_joules / 3.6e6) * 0.25 * 1e9) / 1e9);
    assert.equal(rep.usd_energy_source, 'estimate');
    assert.equal(rep.electricity_usd_per_kwh, 0.25);
    assert.ok(rep.suite_window_ms > 0, String(rep.suite_window_ms));
    assert.equal(rep.usd_hardware, Math.round((rep.suite_window_ms / 3.6e6) * 2 * 1e9) / 1e9);
    assert.equal(rep.usd_hardware_source, 'suite_window');
    assert.equal(rep.usd_tokens, null);
    assert.equal(rep.usd_tokens_source, null);
    assert.ok(Math.abs(rep.total_usd - (rep.usd_energy + rep.usd_hardware)) < 2e-9, JSON.stringify([rep.total_usd, rep.usd_energy, rep.usd_hardware]));
    assert.equal(rep.usd_per_correct, Math.round((rep.total_usd / rep.weighted_correct) * 1e9) / 1e9);
    // Energy and hardware are run-level: no per-case dollars to resample.
    assert.equal(rep.ci.usd_per_correct, null);
    assert.doesNotMatch(r.stderr, /cost unknown/);
    const table = await jb(['report', 'est.json']);
    assert.match(table.stdout + table.stderr, /cost parts\s+tokens n\/a · energy \$\S+ \[estimate\] · hardware \$/);
  });

  it('a load run (--request-rate) is priced the same way: tokens, its whole-run energy and its wall time; report FILE gives it back', async () => {
    const r = await jb(['run', '--suite', 'suite.json', '--config', 'full.yaml', '--meter', 'estimate', '--request-rate', '50', '--num-requests', '6', '--electricity-usd-per-kwh', '0.3', '--hardware-usd-per-hour', '2', '--out', 'load.json']);
    assert.equal(r.code, 0, r.stderr);
    const rep = json('load.json');
    assert.ok(rep.load, 'a load report');
    assert.ok(Math.abs(rep.usd_tokens - (6 * (1200 * 3 + 80 * 15)) / 1e6) < 1e-12, String(rep.usd_tokens));
    assert.equal(rep.usd_energy, Math.round((rep.total_joules / 3.6e6) * 0.3 * 1e9) / 1e9);
    assert.equal(rep.usd_energy_source, 'estimate');
    assert.equal(rep.usd_hardware, Math.round((rep.suite_window_ms / 3.6e6) * 2 * 1e9) / 1e9);
    assert.ok(Math.abs(rep.total_usd - (rep.usd_tokens + rep.usd_energy + rep.usd_hardware)) < 2e-9);
    const rebuilt = await jb(['report', '--json', 'load.results.jsonl']);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.deepEqual(JSON.parse(rebuilt.stdout), rep);
  });

  it('prices measured RAPL energy from a powercap tree, labelled rapl; the same results file rebuilds the same report', async () => {
    const r = await jb(['run', '--suite', 'suite.json', '--target', 'ollama', '--model', 'm1', '--base-url', ollamaUrl, '--meter', 'rapl', '--electricity-usd-per-kwh', '0.5', '--out', 'rapl.json'], {
      JOULEBENCH_POWERCAP_ROOT: rapl.root,
    });
    assert.equal(r.code, 0, r.stderr);
    const rep = json('rapl.json');
    assert.equal(rep.energy_source, 'rapl');
    assert.ok(rep.total_joules >= 4, String(rep.total_joules));
    assert.equal(rep.usd_energy, Math.round((rep.total_joules / 3.6e6) * 0.5 * 1e9) / 1e9);
    assert.equal(rep.usd_energy_source, 'rapl');
    assert.equal(rep.usd_hardware, null);
    assert.equal(rep.hardware_usd_per_hour, null);
    assert.equal(rep.total_usd, rep.usd_energy);
    const again = await jb(['report', 'rapl.results.jsonl', '--out', 'rebuilt.json']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(json('rebuilt.json').usd_energy, rep.usd_energy);
    // The report depends on the prices: a resume with others is refused, naming them.
    const resumed = await jb(['run', '--suite', 'suite.json', '--target', 'ollama', '--model', 'm1', '--base-url', ollamaUrl, '--meter', 'rapl', '--electricity-usd-per-kwh', '0.6', '--resume', 'rapl.results.jsonl'], {
      JOULEBENCH_POWERCAP_ROOT: rapl.root,
    });
    assert.equal(resumed.code, 2);
    assert.match(resumed.stderr, /cannot resume: it was written with prices \{"electricity_usd_per_kwh":0\.5\}/);
  });

  it('code: each solver row priced by its estimated energy and wall time, and the same from --report', async () => {
    const r = await jb(['code', '--solvers', 'reference,noop', '--tasks', 'off-by-one', '--sandbox', 'none', '--meter', 'estimate', '--electricity-usd-per-kwh', '0.3', '--hardware-usd-per-hour', '1', '--out', 'code.json', '--quiet', '--no-history']);
    assert.equal(r.code, 0, r.stderr);
    const rows = json('code.json').solvers;
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.equal(row.energy_source, 'estimate');
      assert.ok(row.total_joules > 0, String(row.total_joules));
      assert.equal(row.usd_energy, Math.round((row.total_joules / 3.6e6) * 0.3 * 1e9) / 1e9);
      assert.equal(row.usd_energy_source, 'estimate');
      assert.equal(row.usd_hardware, Math.round((row.total_wall_ms / 3.6e6) * 1 * 1e9) / 1e9);
      assert.equal(row.usd_tokens, 0);
      assert.ok(Math.abs(row.total_usd - (row.usd_energy + row.usd_hardware)) < 2e-9);
    }
    const again = await jb(['code', '--report', 'code.json', '--json']);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout).solvers, rows);
  });

  it('infer: the median request of each arm priced by its measured RAPL energy and e2e time, the same again from --report', async () => {
    const r = await jb(['infer', '--model', 'm1', '--base-url', ollamaUrl, '--runs', '2', '--warmup', '0', '--cold', '0', '--num-predict', '3', '--gpu-snapshot-cmd', '', '--peak-flops', '1e11', '--quiet', '--no-history', '--electricity-usd-per-kwh', '0.4', '--hardware-usd-per-hour', '3', '--out', 'infer.json'], {
      JOULEBENCH_POWERCAP_ROOT: rapl.root,
    });
    assert.equal(r.code, 0, r.stderr);
    const file = json('infer.json');
    assert.deepEqual(file.prices, { electricity_usd_per_kwh: 0.4, hardware_usd_per_hour: 3 });
    const arm = file.arms[0];
    const e2e = arm.runs.map((x: { e2e_ms: number }) => x.e2e_ms).sort((a: number, b: number) => a - b);
    const energy = file.summary.arms[0].stats.energy;
    const usd = energy.usd_per_request_median;
    assert.equal(energy.source, 'rapl');
    assert.ok(energy.joules_median > 0, String(energy.joules_median));
    assert.equal(usd.usd_energy, Math.round((energy.joules_median / 3.6e6) * 0.4 * 1e9) / 1e9);
    assert.equal(usd.usd_energy_source, 'rapl');
    assert.equal(usd.usd_hardware, Math.round((((e2e[0] + e2e[1]) / 2) / 3.6e6) * 3 * 1e9) / 1e9);
    assert.equal(usd.usd_tokens, null);
    assert.ok(Math.abs(usd.total_usd - (usd.usd_energy + usd.usd_hardware)) < 2e-9);
  });

  it('refuses a negative price and a token price given alone, naming the key', async () => {
    const neg = await jb(['run', '--suite', 'suite.json', '--electricity-usd-per-kwh', '-1']);
    assert.equal(neg.code, 2);
    assert.match(neg.stderr, /--electricity-usd-per-kwh.*must be a number >= 0/);
    writeFileSync(join(dir, 'half.yaml'), 'prices:\n  input_usd_per_mtok: 3\n  electricity_usd_per_kwh: 0.2\n');
    const half = await jb(['run', '--suite', 'suite.json', '--config', 'half.yaml']);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /prices\.output_usd_per_mtok/);
  });
});
