import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { writeMtBench } from '../judge/mt-bench-data.js';

describe('rescore writes a new results file unless --in-place', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-rescore-out-'));
  let sut: FakeServer;
  let judge: FakeServer;
  const files = writeMtBench(dir);
  const results = join(dir, 'run.results.jsonl');
  const cfg = join(dir, 'judge.yaml');
  before(async () => {
    sut = await startFakeOpenAI(() => ({ kind: 'plain', text: 'an answer', usage: { prompt_tokens: 5, completion_tokens: 2 } }));
    judge = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Fine. [[7]]', usage: { prompt_tokens: 50, completion_tokens: 5 } }));
    writeFileSync(cfg, `judge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: j\n  cache: judgements.jsonl\n`);
    // The run, unjudged: its results file is what rescore reads.
    const r = await cli(['run', '--suite', 'mt-bench', '--data', files.questions, '--target', 'openai', '--endpoint', sut.url, '--model', 'm', '-o', join(dir, 'run.json'), '--no-history', '-q']);
    assert.equal(r.code, 0, r.stderr);
  });
  after(async () => {
    await sut.close();
    await judge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('by default: run.rescored.results.jsonl, the input byte for byte as it was', async () => {
    const input = readFileSync(results);
    const r = await cli(['rescore', results, '--judge', cfg, '--data', files.questions], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readFileSync(results), input);
    const out = join(dir, 'run.rescored.results.jsonl');
    assert.match(readFileSync(out, 'utf8'), /"record":"judge"/);
    assert.ok(r.stderr.includes(`results ${out} (written with the scores)`), r.stderr);
  });

  it('--in-place rewrites the input', async () => {
    const r = await cli(['rescore', results, '--judge', cfg, '--data', files.questions, '--in-place', '-q'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(readFileSync(results, 'utf8'), /"record":"judge"/);
  });
});
