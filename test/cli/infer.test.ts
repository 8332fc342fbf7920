import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli as runCli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

/** A fake RAPL tree whose package counter the fake server advances by 1 J per generation. */
const rapl = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }]);
let counter_uj = 0;
// GPUs hidden, RAPL from the fake tree: `--meter auto` is then deterministic on any machine.
const METER_ENV = { JOULEBENCH_POWERCAP_ROOT: rapl.root, CUDA_VISIBLE_DEVICES: '' };

/** The built CLI, spawned asynchronously (the fake server lives in this process and must keep answering). */
const cli = (args: string[], cwd: string, env: Record<string, string> = METER_ENV) => runCli(args, { cwd, env });

describe('joulebench infer and run --target ollama, as a user runs them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-cli-infer-'));
  const snap = join(dir, 'snap.txt');
  const fake = new FakeOllama({
    models: { m1: { parameter_count: 1e6 } },
    load_ms: 5,
    prefill_ms_per_token: 0.05,
    decode_tok_s: (t) => (t === 4 ? 30 : 20),
    reply: () => 'motor overheats',
    onGeneration: () => setEnergy(rapl.root, 'intel-rapl:0', (counter_uj += 1_000_000)),
  });
  let url = '';
  before(async () => {
    writeFileSync(snap, '0, 100 MiB\n');
    url = await fake.start();
  });
  after(async () => {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
    rapl.cleanup();
  });

  const common = () => ['--model', 'm1', '--base-url', url, '--runs', '2', '--warmup', '1', '--cold', '1', '--num-predict', '3', '--gpu-snapshot-cmd', `cat '${snap}'`, '--peak-flops', '1e11'];

  it('infer writes the run file and prints the table of arms with labelled numbers', async () => {
    const out = join(dir, 'run1.json');
    const r = await cli(['infer', ...common(), '--threads', 'default,4', '--out', out], dir);
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.format, 'joulebench-infer/1');
    assert.match(file.prompt_sha256, /^[0-9a-f]{64}$/);
    assert.match(file.started_utc, /Z$/);
    assert.deepEqual(file.arms.map((a: { id: string }) => a.id), ['m1@t=default', 'm1@t=4']);
    assert.equal(file.arms[0].warmup_discarded.length, 1);
    assert.match(r.stdout, /m1@t=default/);
    assert.match(r.stdout, /cached-prefix ms/);
    assert.match(r.stdout, /fresh, loaded ms/);
    assert.match(r.stdout, /fully cold ms/);
    assert.match(r.stdout, /\(max − min\) ÷ median/);
    assert.match(r.stdout, /1\.50×/, 'best/default for t=4: 30 ÷ 20');
    assert.match(r.stdout, /CPU-only/);
    assert.match(r.stderr, /m1@t=4: run 2\/2/);
    // Which arm of how many is running, before its runs.
    assert.match(r.stderr, /arm 1\/2: m1@t=default\n[^]*arm 2\/2: m1@t=4\n[^]*m1@t=4: cold 1\/1/);
    // --meter auto found the (fake) RAPL counter: 1 J per request, 3 decoded tokens.
    const r0 = file.arms[0].runs[0];
    assert.equal(r0.energy_j, 1);
    assert.equal(r0.energy_source, 'rapl');
    assert.ok(Math.abs(r0.j_per_decoded_token - 1 / 3) < 1e-8, 'J per decoded token = 1 J / 3 tokens');
    assert.equal(r0.decoded_tokens_per_j, 3);
    assert.match(file.receipts.meter.id, /^auto\(rapl\)$/);
    assert.match(r.stdout, /0\.333\s+3\.00/, 'J/token and tok/J columns');
  });

  it('with no hardware counter, energy is null (never 0, never an estimate of this process)', async () => {
    const out = join(dir, 'nometer.json');
    const env = { JOULEBENCH_POWERCAP_ROOT: join(dir, 'no-powercap'), CUDA_VISIBLE_DEVICES: '' };
    const promptFile = join(dir, 'prompt.txt');
    writeFileSync(promptFile, 'summarise the log: pump two tripped twice');
    const r = await cli(['infer', '--model', 'm1', '--base-url', url, '--cold', '0', '--warmup', '0', '--runs', '1', '--num-predict', '2', '--gpu-snapshot-cmd', '', '--prompt-file', promptFile, '-q', '--out', out], dir, env);
    assert.equal(r.code, 0, r.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.arms[0].runs[0].energy_j, null);
    assert.equal(file.arms[0].runs[0].energy_source, 'none');
    assert.equal(file.receipts.meter.id, null);
    assert.match(file.receipts.meter.note, /energy is null/);
    // Issue 11: the note agrees with the null figure (it once said "using the estimate … energy is null").
    assert.doesNotMatch(file.receipts.meter.note, /using the estimate/);
    assert.equal(file.arms[0].receipts.gpu_snapshot, 'unavailable');
    // The frozen prompt is the file's bytes, sent as-is and identified by their sha256.
    assert.equal(file.prompt_sha256, createHash('sha256').update('summarise the log: pump two tripped twice').digest('hex'));
    assert.equal(file.prompt_source, promptFile);
    assert.equal(fake.seen.filter((x) => x.body?.prompt !== undefined).at(-1)!.body!.prompt, 'summarise the log: pump two tripped twice');
  });

  it('infer --report prints several files; a contaminated arm is named and shows no figures', async () => {
    const a = join(dir, 'run1.json'); // written by the test above
    const b = join(dir, 'b.json');
    const file = JSON.parse(readFileSync(a, 'utf8'));
    file.arms[0].contaminated = true;
    file.arms[0].contamination = 'GPU snapshot changed during the arm: before "0, 38764 MiB", after "0, 46719 MiB"';
    writeFileSync(b, JSON.stringify(file));
    const r = await cli(['infer', '--report', a, b], dir);
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.split('\n').filter((l) => /^\s+\S+\.json\s+m1@t=default/.test(l));
    assert.equal(rows.length, 2);
    assert.doesNotMatch(rows[0]!, /CONTAMINATED/);
    assert.match(rows[1]!, /CONTAMINATED/);
    assert.match(rows[1]!, /excluded/);
    assert.match(r.stdout, /46719 MiB.*excluded from every summary/);
    // With its default arm excluded, b.json has no best/default ratio: the 1.50× appears once, for a.json.
    assert.equal(r.stdout.match(/1\.50×/g)?.length, 1);
  });

  it('bad input is exit 2 with one line naming the file or flag', async () => {
    const missing = await cli(['infer', '--report', join(dir, 'nope.json')], dir);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json: no such file/);
    const noModel = await cli(['infer', '--base-url', url], dir);
    assert.equal(noModel.code, 2);
    assert.match(noModel.stderr, /--model: required/);
  });

  it('run --target ollama --model M --base-url URL scores a suite through Ollama', async () => {
    const out = join(dir, 'report.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'ollama', '--model', 'm1', '--base-url', url, '--warmup', '0', '-q', '--out', out], dir);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(report.target, 'ollama:m1');
    assert.ok(report.case_count > 0, 'cases ran');
  });

  it('run --target cascade --neural ollama sends the cascade misses to Ollama', async () => {
    const before = fake.generations;
    const out = join(dir, 'cascade.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'cascade', '--neural', 'ollama', '--model', 'm1', '--base-url', url, '--warmup', '0', '-q', '--out', out], dir);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(report.target, 'cascade:reference+ollama:m1');
    assert.equal(fake.generations - before, report.stage_distribution.neural);
    assert.ok(report.stage_distribution.neural > 0, 'some cases reach the neural stage');
  });
});
