import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { datasetLengths, randomSuite, sharegptSuite, type RandomDataset } from '../../src/load/dataset.js';
import { loadTokenizer } from '../../src/load/tokenizer.js';
import { writeTinyGguf } from '../helpers/tiny-gguf.js';
import { rec } from './record-fixture.js';

const d = (p: Partial<RandomDataset>): RandomDataset => ({ kind: 'random', input_len: 100, output_len: 8, range_ratio: 0, prefix_len: 0, prompt_lengths: 'approx-words', ...p });
const words = (s: string): string[] => s.split(' ');

describe('random dataset: vLLM bench serve\'s random prompts, sized in words', () => {
  it('prompt lengths uniform in [⌊N(1 − r)⌋, ⌈N(1 + r)⌉] after a shared prefix; the same seed gives the same prompts', () => {
    const s = randomSuite(d({ input_len: 40, range_ratio: 0.5, prefix_len: 6 }), 400, 7);
    assert.equal(s.cases.length, 400);
    const lens = s.cases.map((c) => words(c.prompt!).length - 6);
    assert.equal(Math.min(...lens), 20);
    assert.equal(Math.max(...lens), 60);
    const prefix = words(s.cases[0]!.prompt!).slice(0, 6).join(' ');
    assert.ok(s.cases.every((c) => c.prompt!.startsWith(prefix + ' ') && c.expected === null));
    assert.notEqual(s.cases[0]!.prompt, s.cases[1]!.prompt);
    assert.deepEqual(randomSuite(d({ input_len: 40, range_ratio: 0.5, prefix_len: 6 }), 400, 7), s);
    assert.notDeepEqual(randomSuite(d({ input_len: 40, range_ratio: 0.5, prefix_len: 6 }), 400, 8).cases, s.cases);
    assert.ok(randomSuite(d({ input_len: 12 }), 5, 0).cases.every((c) => words(c.prompt!).length === 12));
  });

  it('realised lengths from the server\'s usage; no usage gives no input figures, never the asked ones', () => {
    const asked = d({});
    const l = datasetLengths(asked, [rec({ prompt_tokens: 110, output_tokens: 8 }), rec({ prompt_tokens: 120, output_tokens: 8 }), rec({ ok: false, prompt_tokens: null })]);
    assert.equal(l.input_len_source, 'usage');
    assert.deepEqual(l.input, { mean: 115, p50: 115, p99: 119.9 });
    assert.deepEqual(l.output, { mean: 8, p50: 8, p99: 8 });
    const none = datasetLengths(asked, [rec({ prompt_tokens: null }), rec({ prompt_tokens: 5 })]);
    assert.equal(none.input_len_source, null);
    assert.equal(none.input, null);
  });

  it('ShareGPT: the first turn is the prompt, the second turn\'s length the output asked; short, long and one-turn conversations are left out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-sharegpt-'));
    try {
      const path = join(dir, 'sg.json');
      const conv = (h: string, g: string, more = true) => ({ id: h, conversations: [{ from: 'human', value: h }, ...(more ? [{ from: 'gpt', value: g }, { from: 'human', value: 'and then' }] : [])] });
      const long = Array.from({ length: 1025 }, () => 'w').join(' ');
      writeFileSync(path, JSON.stringify([conv('one two three four', 'a b c d e'), conv('too short', 'a b c d'), conv('five six seven eight nine', 'x y z'), conv('only one turn here', '', false), conv(long, 'a b c d'), conv('ten eleven twelve thirteen', 'p q r s t u')]));
      const s = sharegptSuite({ kind: 'sharegpt', path, prompt_lengths: 'approx-words' }, 10, 1);
      assert.deepEqual(s.cases.map((c) => [c.prompt, c.max_tokens]).sort(), [['one two three four', 5], ['ten eleven twelve thirteen', 6]]);
      assert.deepEqual(sharegptSuite({ kind: 'sharegpt', path, prompt_lengths: 'approx-words' }, 1, 1).cases.length, 1);
      writeFileSync(path, '{"not": "a list"}');
      assert.throws(() => sharegptSuite({ kind: 'sharegpt', path, prompt_lengths: 'approx-words' }, 1, 1), /sharegpt .*sg\.json: expected a JSON list/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ShareGPT conversations (multiTurn, --think-time-ms)', () => {
  it('keeps each conversation\'s pairs while each passes the filter and the context stays within 2048', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-sharegpt-mt-'));
    try {
      const path = join(dir, 'sg.json');
      const w = (k: number, x = 'w') => Array.from({ length: k }, () => x).join(' ');
      const conv = (id: string, ...turns: string[]) => ({ id, conversations: turns.map((value, k) => ({ from: k % 2 === 0 ? 'human' : 'gpt', value })) });
      writeFileSync(path, JSON.stringify([
        conv('three', w(4, 'a'), w(5), w(6, 'b'), w(7), w(8, 'c'), w(9), 'an unanswered last turn'),
        conv('short-reply', w(4, 'd'), w(5), w(6, 'e'), 'ok', w(8, 'f'), w(9)),
        conv('context', w(4, 'g'), w(1000), w(4, 'h'), w(1000), w(4, 'i'), w(100)),
        conv('one-pair', w(5, 'j'), w(5)),
        conv('bad-first', 'hi', w(5), w(6, 'k'), w(7)),
      ]));
      const d = { kind: 'sharegpt' as const, path, prompt_lengths: 'approx-words' as const };
      const s = sharegptSuite(d, 10, 1, undefined, true);
      const byId = new Map(s.cases.map((c) => [c.id, c]));
      assert.deepEqual([...byId.keys()].sort(), ['sharegpt-0', 'sharegpt-1', 'sharegpt-2', 'sharegpt-3']);
      assert.deepEqual(byId.get('sharegpt-0')!.turns, [w(4, 'a'), w(6, 'b'), w(8, 'c')]);
      assert.deepEqual(byId.get('sharegpt-0')!.turn_max_tokens, [5, 7, 9]);
      // A turn whose reply is too short ends the conversation there.
      assert.deepEqual([byId.get('sharegpt-1')!.turns, byId.get('sharegpt-1')!.turn_max_tokens], [[w(4, 'd')], [5]]);
      // The third turn's request would hold 2008 + 104 words: cut before it.
      assert.deepEqual([byId.get('sharegpt-2')!.turns, byId.get('sharegpt-2')!.turn_max_tokens], [[w(4, 'g'), w(4, 'h')], [1000, 1000]]);
      // A conversation of one pair is a conversation of one turn.
      assert.deepEqual([byId.get('sharegpt-3')!.turns, byId.get('sharegpt-3')!.turn_max_tokens], [[w(5, 'j')], [5]]);
      assert.match(s.version, /-turns$/);
      // Without multiTurn, the same file gives the first pairs as single requests.
      assert.ok(sharegptSuite(d, 10, 1).cases.every((c) => c.turns === undefined && c.prompt !== undefined));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('random dataset with a tokenizer: prompts cut to the asked tokens', () => {
  it('every prompt is exactly prefix + input tokens by node-llama-cpp, counted independently; the prefix is shared', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-tok-'));
    try {
      const gguf = join(dir, 't.gguf');
      writeTinyGguf(gguf);
      const { getLlama } = await import('node-llama-cpp');
      const model = await (await getLlama({ gpu: false, build: 'never' })).loadModel({ modelPath: gguf, vocabOnly: true });
      const s = randomSuite(d({ input_len: 30, prefix_len: 4, prompt_lengths: 'tokenizer', tokenizer: gguf }), 6, 1, await loadTokenizer(gguf));
      for (const c of s.cases) {
        assert.equal(model.tokenize(c.prompt!).length, 34, c.prompt);
        assert.equal(c.prompt_tokens, 34);
      }
      const prefix = model.detokenize(model.tokenize(s.cases[0]!.prompt!).slice(0, 4));
      assert.ok(s.cases.every((c) => c.prompt!.startsWith(prefix)));
      const l = datasetLengths(d({ prompt_lengths: 'tokenizer' }), [rec({ tokenizer_tokens: 34, prompt_tokens: 40 })]);
      assert.deepEqual([l.input_len_source, l.input?.mean, l.input_usage?.mean], ['tokenizer', 34, 40]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
