import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadBlockFromResults } from '../../src/load/rebuild.js';
import { readResultsFile } from '../../src/runner/results-file.js';
import { cli } from '../helpers/cli.js';
import { startQueueServer, type QueueServer } from '../helpers/queue-server.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';

describe('joulebench run --dataset random: synthetic prompts of asked lengths', () => {
  let server: QueueServer;
  let dir: string;
  before(async () => {
    server = await startQueueServer({ service_ms: 1, tokens: 2 });
    dir = mkdtempSync(join(tmpdir(), 'jb-load-dataset-'));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const base = () => ['run', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--idle-ms', '1'];

  it('asks max_tokens = --output-len with ignore_eos, sends prompts of the asked lengths, and reports the realised ones from usage', async () => {
    const out = join(dir, 'random.json');
    const r = await cli([...base(), '--request-rate', '200', '--num-requests', '30', '--dataset', 'random', '--input-len', '40', '--output-len', '9', '--range-ratio', '0.25', '--prefix-len', '5', '--seed', '3', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.seen.length, 30);
    // Checked at the server: what was asked, and how long each prompt was.
    assert.ok(server.seen.every((s) => s.max_tokens === 9 && s.ignore_eos === true));
    const lens = server.seen.map((s) => s.prompt.split(' ').length);
    assert.ok(lens.every((n) => n >= 5 + 30 && n <= 5 + 50), String(lens));
    assert.ok(new Set(lens).size > 1);
    const prefix = server.seen[0]!.prompt.split(' ').slice(0, 5).join(' ');
    assert.ok(server.seen.every((s) => s.prompt.startsWith(prefix + ' ')));
    const report = JSON.parse(readFileSync(out, 'utf8')) as { load: { dataset: { asked: Record<string, unknown>; input_len_source: string; input: { mean: number; p50: number; p99: number }; output: { mean: number; p99: number }; output_len_source: string } } };
    const d = report.load.dataset;
    assert.deepEqual(d.asked, { kind: 'random', input_len: 40, output_len: 9, range_ratio: 0.25, prefix_len: 5, prompt_lengths: 'approx-words' });
    // The server's usage counts the prompt's words: the realised input is what it received.
    assert.equal(d.input_len_source, 'usage');
    const mean = lens.reduce((a, b) => a + b, 0) / lens.length;
    assert.ok(Math.abs(d.input.mean - mean) < 1e-3, `${d.input.mean} vs ${mean}`);
    assert.deepEqual([d.output.mean, d.output.p99, d.output_len_source], [9, 9, 'usage']);
    assert.match(r.stdout, /dataset random \(prompts sized in words, one word ≈ one token\): input asked 5 prefix \+ 40 ± 25 %, realised mean [\d.]+, p50 [\d.]+, p99 [\d.]+ \[usage\]; output asked 9, realised mean 9/);
    // The results file rebuilds the same block.
    const file = readResultsFile(out.replace(/\.json$/, '.results.jsonl'));
    assert.deepEqual(loadBlockFromResults(file.header!, file.results, file.other)?.dataset, report.load.dataset);
  });

  it('--dataset sharegpt: first turns as prompts, each asking its reply\'s length', async () => {
    const path = join(dir, 'sg.json');
    const replies: Record<string, string> = { 'tell me a story please': 'once upon a time there was', 'name four big cities': 'paris london tokyo lagos', 'x': 'too short a prompt' };
    writeFileSync(path, JSON.stringify(Object.entries(replies).map(([h, g]) => ({ conversations: [{ from: 'human', value: h }, { from: 'gpt', value: g }] }))));
    const before = server.seen.length;
    const r = await cli([...base(), '--request-rate', '100', '--num-requests', '4', '--dataset', 'sharegpt', '--data', path, '-o', join(dir, 'sg-run.json')]);
    assert.equal(r.code, 0, r.stderr);
    const seen = server.seen.slice(before);
    assert.equal(seen.length, 4);
    for (const s of seen) {
      assert.equal(s.max_tokens, replies[s.prompt]!.split(' ').length, s.prompt);
      assert.equal(s.ignore_eos, true);
    }
    assert.deepEqual(new Set(seen.map((s) => s.prompt)), new Set(['tell me a story please', 'name four big cities']));
  });

  it('--tokenizer FILE.gguf: prompts of the asked token counts by that tokenizer, replies asked at their token counts, labelled', async () => {
    const gguf = join(dir, 'tok.gguf');
    writeTinyGguf(gguf);
    // Counted here independently, through node-llama-cpp itself.
    const { getLlama } = await import('node-llama-cpp');
    const model = await (await getLlama({ gpu: false, build: 'never' })).loadModel({ modelPath: gguf, vocabOnly: true });
    const count = (s: string): number => model.tokenize(s).length;
    const before = server.seen.length;
    const out = join(dir, 'tok.json');
    const r = await cli([...base(), '--request-rate', '200', '--num-requests', '12', '--dataset', 'random', '--input-len', '40', '--output-len', '3', '--range-ratio', '0.25', '--prefix-len', '5', '--tokenizer', gguf, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const lens = server.seen.slice(before).map((s) => count(s.prompt));
    assert.equal(lens.length, 12);
    assert.ok(lens.every((n) => n >= 5 + 30 && n <= 5 + 50), String(lens));
    assert.ok(new Set(lens).size > 1);
    const d = (JSON.parse(readFileSync(out, 'utf8')) as { load: { dataset: { asked: Record<string, unknown>; input_len_source: string; input: { mean: number }; input_usage: { mean: number } } } }).load.dataset;
    assert.equal(d.asked.prompt_lengths, 'tokenizer');
    assert.equal(d.input_len_source, 'tokenizer');
    assert.ok(Math.abs(d.input.mean - lens.reduce((a, b) => a + b, 0) / lens.length) < 1e-3, `${d.input.mean}`);
    assert.ok(d.input_usage.mean > 0);
    const file = readResultsFile(out.replace(/\.json$/, '.results.jsonl'));
    assert.deepEqual(loadBlockFromResults(file.header!, file.results, file.other)?.dataset, d);
    assert.match(r.stdout, /prompts sized by the tokenizer of .*tok\.gguf\): input asked 5 prefix \+ 40 ± 25 %, realised mean [\d.]+, p50 [\d.]+, p99 [\d.]+ \[tokenizer\], mean [\d.]+, p50 [\d.]+, p99 [\d.]+ \[usage\]/);
    // ShareGPT: the reply's length asked is its token count.
    const path = join(dir, 'sg-tok.json');
    const replies: Record<string, string> = { 'tell me a story please': 'once upon a time there was', 'name four big cities': 'paris london tokyo lagos' };
    writeFileSync(path, JSON.stringify(Object.entries(replies).map(([h, g]) => ({ conversations: [{ from: 'human', value: h }, { from: 'gpt', value: g }] }))));
    const mark = server.seen.length;
    const sg = await cli([...base(), '--request-rate', '100', '--num-requests', '2', '--dataset', 'sharegpt', '--data', path, '--tokenizer', gguf, '-o', join(dir, 'sg-tok-run.json')]);
    assert.equal(sg.code, 0, sg.stderr);
    for (const s of server.seen.slice(mark)) assert.equal(s.max_tokens, count(replies[s.prompt]!), s.prompt);
    // A tokenizer file that is not there: one line naming it.
    const bad = await cli([...base(), '--request-rate', '10', '--num-requests', '2', '--dataset', 'random', '--input-len', '5', '--output-len', '5', '--tokenizer', join(dir, 'nope.gguf')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr.trim(), /^[^\n]*nope\.gguf[^\n]*$/);
  });

  it('refuses a length flag without --dataset, --dataset without --num-requests, and a non-OpenAI target, each in one line', async () => {
    const noDataset = await cli([...base(), '--request-rate', '10', '--input-len', '5']);
    assert.equal(noDataset.code, 2);
    assert.match(noDataset.stderr, /--input-len goes with --dataset random/);
    const noN = await cli([...base(), '--request-rate', '10', '--dataset', 'random', '--input-len', '5', '--output-len', '5']);
    assert.equal(noN.code, 2);
    assert.match(noN.stderr, /--dataset needs --num-requests/);
    const echo = await cli(['run', '--target', 'cascade', '--no-history', '--request-rate', '10', '--num-requests', '2', '--dataset', 'random', '--input-len', '5', '--output-len', '5']);
    assert.equal(echo.code, 2);
    assert.match(echo.stderr, /--dataset applies to --target openai/);
  });
});
