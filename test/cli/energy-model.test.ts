import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const BIN = resolve('bin/joulebench.js');
const servers: FakeServer[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function cli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const p = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('close', (code) => ok({ code: code ?? -1, stdout, stderr }));
  });
}

/** A server answering every question with the expected text of our suite, 100 output tokens each. */
async function setUp(model: string, energyModel = ''): Promise<string> {
  const s = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Paris', usage: { prompt_tokens: 20, completion_tokens: 100 } }));
  servers.push(s);
  const d = mkdtempSync(join(tmpdir(), 'jb-cli-model-api-'));
  dirs.push(d);
  writeFileSync(join(d, 'suite.json'), JSON.stringify({ name: 'capitals', version: '1', cases: [{ id: 'a', prompt: 'Capital of France?', expected: 'Paris' }, { id: 'b', prompt: 'Capital of Italy?', expected: 'Rome' }] }));
  writeFileSync(join(d, 'run.yaml'), `target:\n  kind: openai\n  endpoint: "${s.url}"\n  model: ${model}\n  stream: false\n${energyModel}`);
  return d;
}

test('a hosted model in the table: model:api energy per request, its range to J/correct, CO2e at a region’s intensity', async () => {
  const d = await setUp('meta-llama/Llama-3.1-8B-Instruct');
  const r = await cli(['run', '--suite', 'suite.json', '--config', 'run.yaml', '--meter', 'model', '--grid-intensity', 'FRA', '--no-history', '--out', 'report.json'], d);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(join(d, 'report.json'), 'utf8'));
  assert.equal(report.energy_source, 'model:api');
  assert.equal(report.correct_count, 1);
  const range = report.energy_model_range;
  assert.ok(range.joules_per_correct.low < report.joules_per_correct && report.joules_per_correct < range.joules_per_correct.high);
  // 2 requests × 100 tokens on one GPU for an 8B model: a few tens of joules each.
  assert.ok(report.total_joules > 10 && report.total_joules < 200, String(report.total_joules));
  assert.equal(report.co2e.region, 'FRA');
  assert.equal(report.co2e.energy_basis, 'net');
  assert.ok(Math.abs(report.co2e.grams_per_correct - (report.net_joules_per_correct / 3.6e6) * 44.18) < 1e-6);
  assert.deepEqual(Object.keys(report.co2e.grams_per_correct_range), ['low', 'high']);
  assert.match(r.stdout, /J \/ correct range/);
  assert.match(r.stdout, /CO2e \/ correct .* g \(range .*\) \[model:api, net\] at 44\.18 gCO2e\/kWh \(FRA, ADEME/);
  const lines = readFileSync(join(d, 'report.json').replace('report.json', 'report.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const cases = lines.filter((l) => l.record === 'case');
  assert.equal(cases.length, 2);
  for (const c of cases) {
    assert.equal(c.energy_source, 'model:api');
    assert.ok(c.joules_range.low <= c.joules && c.joules <= c.joules_range.high);
  }
});

test('an unknown hosted model stays n/a; the config can give its size, and then it is modelled', async () => {
  let d = await setUp('gpt-4o');
  let r = await cli(['run', '--suite', 'suite.json', '--config', 'run.yaml', '--meter', 'model', '--no-history', '--quiet', '--out', 'report.json'], d);
  assert.equal(r.code, 0, r.stderr);
  let report = JSON.parse(readFileSync(join(d, 'report.json'), 'utf8'));
  assert.equal(report.total_joules, null);
  assert.equal(report.energy_source, 'none');
  assert.equal('energy_model_range' in report, false);

  d = await setUp('gpt-4o', '  energy_model:\n    active_params_b: [100, 300]\n    total_params_b: 1000\n');
  r = await cli(['run', '--suite', 'suite.json', '--config', 'run.yaml', '--meter', 'model', '--no-history', '--quiet', '--out', 'report.json'], d);
  assert.equal(r.code, 0, r.stderr);
  report = JSON.parse(readFileSync(join(d, 'report.json'), 'utf8'));
  assert.equal(report.energy_source, 'model:api');
  assert.ok(report.energy_model_range.total_joules.high > 2 * report.energy_model_range.total_joules.low);
  const receipt = JSON.parse(readFileSync(join(d, 'report.receipt.json'), 'utf8'));
  assert.match(JSON.stringify(receipt), /EcoLogits 0\.9\.1/);
});

test('bad input: one line naming the flag or the key, exit 2', async () => {
  const d = await setUp('llama3.1:8b', '  energy_model:\n    active_params_b: [300, 100]\n');
  let r = await cli(['run', '--suite', 'suite.json', '--config', 'run.yaml', '--meter', 'model', '--no-history', '--quiet'], d);
  assert.equal(r.code, 2);
  assert.match(r.stderr.trim(), /^joulebench: .*target\.energy_model\.active_params_b.*low <= high/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  const ok = await setUp('llama3.1:8b');
  r = await cli(['run', '--suite', 'suite.json', '--config', 'run.yaml', '--meter', 'model', '--no-history', '--quiet', '--grid-intensity', 'Atlantis'], ok);
  assert.equal(r.code, 2);
  assert.match(r.stderr.trim(), /--grid-intensity: "Atlantis" is neither a number of gCO2e\/kWh nor a known region/);
  assert.equal(r.stderr.trim().split('\n').length, 1);
});

test('the HTML frontier draws model:api energy on the modelled axis, never the measured one', async () => {
  const d = await setUp('meta-llama/Llama-3.1-8B-Instruct');
  writeFileSync(join(d, 'run2.yaml'), readFileSync(join(d, 'run.yaml'), 'utf8').replace('meta-llama/Llama-3.1-8B-Instruct', 'meta-llama/Llama-3.1-70B-Instruct'));
  for (const [config, out] of [['run.yaml', 'small.json'], ['run2.yaml', 'large.json']]) {
    const r = await cli(['run', '--suite', 'suite.json', '--config', config!, '--meter', 'model', '--no-history', '--out', out!], d);
    assert.equal(r.code, 0, r.stderr);
  }
  const r = await cli(['report', 'small.json', 'large.json', '-o', 'page.html'], d);
  assert.equal(r.code, 0, r.stderr);
  const html = readFileSync(join(d, 'page.html'), 'utf8');
  assert.match(html, /data-chart="frontier" data-energy="modelled"/);
  assert.doesNotMatch(html, /data-chart="frontier" data-energy="measured"/);
});
