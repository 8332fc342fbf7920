import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadBlockFromResults } from '../../src/load/rebuild.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
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

  it('--dataset sharegpt --think-time-ms: each conversation\'s human turns in order, with the model\'s own answers, each asking its dataset reply\'s length', async () => {
    const path = join(dir, 'sg-conv.json');
    const conv = (...pairs: [string, string][]) => ({ conversations: pairs.flatMap(([h, g]) => [{ from: 'human', value: h }, { from: 'gpt', value: g }]) });
    const story: [string, string][] = [['tell me a story please', 'once upon a time there was'], ['make it a bit longer', 'a fox who lived in the old wood'], ['now end it please', 'and they lived happily ever after']];
    // The second pair's prompt is too short: the conversation is cut to its first turn.
    const cities: [string, string][] = [['name four big cities', 'paris london tokyo lagos'], ['ok', 'good then we agree']];
    writeFileSync(path, JSON.stringify([conv(...story), conv(...cities), conv(['x', 'too short a prompt'])]));
    const reply = new Map([...story, ...cities]);
    const THINK_MS = 100;
    const before = server.seen.length;
    const out = join(dir, 'sg-conv-run.json');
    const r = await cli([...base(), '--request-rate', 'inf', '--num-requests', '2', '--dataset', 'sharegpt', '--data', path, '--think-time-ms', String(THINK_MS), '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const seen = server.seen.slice(before);
    assert.deepEqual(seen.map((s) => s.prompt).sort(), ['make it a bit longer', 'name four big cities', 'now end it please', 'tell me a story please']);
    // Checked at the server: every turn asks its own dataset reply's length, with ignore_eos.
    for (const s of seen) assert.deepEqual([s.max_tokens, s.ignore_eos], [reply.get(s.prompt)!.split(' ').length, true], s.prompt);
    const at = (prompt: string) => seen.find((s) => s.prompt === prompt)!;
    // The model's own answers (the server streams "ok" then " ." up to max_tokens), never the dataset's replies.
    const answer = (prompt: string) => ['ok', ...Array.from({ length: reply.get(prompt)!.split(' ').length - 1 }, () => '.')].join(' ');
    assert.deepEqual(at('name four big cities').messages, [{ role: 'user', content: 'name four big cities' }]);
    assert.deepEqual(at('tell me a story please').messages, [{ role: 'user', content: 'tell me a story please' }]);
    assert.deepEqual(at('now end it please').messages, [
      { role: 'user', content: 'tell me a story please' },
      { role: 'assistant', content: answer('tell me a story please') },
      { role: 'user', content: 'make it a bit longer' },
      { role: 'assistant', content: answer('make it a bit longer') },
      { role: 'user', content: 'now end it please' },
    ]);
    assert.deepEqual(at('make it a bit longer').messages.slice(0, 2).map((m) => m.content), ['tell me a story please', answer('tell me a story please')]);
    // Each later turn arrived at least the think time after the previous answer was written (the server's clock).
    for (const [prev, next] of [[story[0]![0], story[1]![0]], [story[1]![0], story[2]![0]]] as const) {
      const gap = at(next).at_ms - at(prev).answered_ms!;
      assert.ok(gap >= THINK_MS, `"${next}" arrived ${gap} ms after "${prev}" was answered`);
    }
    const report = JSON.parse(readFileSync(out, 'utf8')) as { load: { conversations: unknown; dataset: { input_len_source: string; input: { mean: number }; output: { mean: number } } } };
    assert.deepEqual(report.load.conversations, { count: 2, turns_per_conversation_mean: 2, think_time_ms: THINK_MS });
    // Realised lengths per turn: the whole conversation sent (the server's usage) and the output it produced.
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const d = report.load.dataset;
    assert.equal(d.input_len_source, 'usage');
    assert.ok(Math.abs(d.input.mean - mean(seen.map((s) => s.messages.reduce((k, m) => k + m.content.split(' ').length, 0)))) < 1e-3, String(d.input.mean));
    assert.ok(Math.abs(d.output.mean - mean(seen.map((s) => s.max_tokens as number))) < 1e-3, String(d.output.mean));
    const file = readResultsFile(out.replace(/\.json$/, '.results.jsonl'));
    // One line a turn: the story's turns 1–3, the cities' one turn.
    assert.deepEqual(file.results.map((x) => (x.meta!.load as { turn?: number }).turn).sort(), [1, 1, 2, 3]);
    assert.deepEqual(loadBlockFromResults(file.header!, file.results, file.other)?.dataset, report.load.dataset);
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
    // Conversations: every turn asks its reply's token count; the input by the tokenizer is the text of the messages sent.
    writeFileSync(path, JSON.stringify([{ conversations: Object.entries(replies).flatMap(([h, g]) => [{ from: 'human', value: h }, { from: 'gpt', value: g }]) }]));
    const convMark = server.seen.length;
    const convOut = join(dir, 'sg-tok-conv.json');
    const conv = await cli([...base(), '--request-rate', 'inf', '--num-requests', '1', '--dataset', 'sharegpt', '--data', path, '--tokenizer', gguf, '--think-time-ms', '1', '-o', convOut]);
    assert.equal(conv.code, 0, conv.stderr);
    const sent = server.seen.slice(convMark);
    assert.deepEqual(sent.map((s) => [s.messages.length, s.max_tokens]), [[1, count(replies['tell me a story please']!)], [3, count(replies['name four big cities']!)]]);
    const cd = (JSON.parse(readFileSync(convOut, 'utf8')) as { load: { dataset: { input_len_source: string; input: { mean: number } } } }).load.dataset;
    assert.equal(cd.input_len_source, 'tokenizer');
    const inputs = sent.map((s) => s.messages.reduce((k, m) => k + count(m.content), 0));
    assert.ok(Math.abs(cd.input.mean - (inputs[0]! + inputs[1]!) / 2) < 1e-3, `${cd.input.mean} vs ${inputs}`);
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
