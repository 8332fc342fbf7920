import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli as runCli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

/** The built CLI, spawned asynchronously (the fake server lives in this process and must keep answering). */
const cli = (args: string[], cwd: string) => runCli(args, { cwd });

describe('joulebench infer and run --target ollama, as a user runs them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-cli-infer-'));
  const snap = join(dir, 'snap.txt');
  const fake = new FakeOllama({
    models: { m1: { parameter_count: 1e6 } },
    load_ms: 5,
    prefill_ms_per_token: 0.05,
    decode_tok_s: (t) => (t === 4 ? 30 : 20),
    reply: () => 'motor overheats',
  });
  let url = '';
  before(async () => {
    writeFileSync(snap, '0, 100 MiB\n');
    url = await fake.start();
  });
  after(async () => {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const common = () => ['--model', 'm1', '--base-url', url, '--runs', '2', '--warmup', '1', '--cold', '1', '--num-predict', '3', '--gpu-snapshot-cmd', `cat '${snap}'`, '--peak-flops', '1e11'];

  it('infer writes the run file and prints the table of arms with labelled numbers', async () => {
    const out = join(dir, 'run1.json');
    const r = await cli(['infer', ...common(), '--threads', '4', '--out', out], dir);
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
    // No meter can read here (none installed, or RAPL unreadable): energy is null, never 0.
    assert.equal(file.arms[0].runs[0].energy_j, null);
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
