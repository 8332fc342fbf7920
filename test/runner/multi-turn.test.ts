import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Case, Suite, Target } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { createOllamaTarget } from '../../src/targets/ollama/target.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { createReplayTarget } from '../../src/targets/replay.js';
import { caseLine } from '../../src/runner/case-line.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { scriptedMeter } from '../meters/fake-meter.js';
import { startFakeOpenAI, type FakeServer, type SeenRequest } from '../helpers/fake-openai.js';

const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const twoTurn: Case = { id: 'mt-1', turns: ['Name a colour.', 'Now name another one.'], expected: null, dataset: 'writing', weight: 1, tags: [] };
const threeTurn: Case = { id: 'mt-2', turns: ['Say one.', 'Say two.', 'Say three.'], expected: null, dataset: 'writing', weight: 1, tags: [] };
const suite: Suite = { name: 'conv', version: '1', scorer: 'substring', cases: [twoTurn, threeTurn], source: 'test' };

/** The server's own answer to a conversation: derived from the last user message, so it can be checked later. */
function answerFor(req: SeenRequest): string {
  const msgs = req.body.messages as { role: string; content: string }[];
  return `answer to <${msgs.at(-1)!.content}> after ${msgs.length} messages`;
}

describe('multi-turn cases against a chat target', () => {
  test('each turn is its own request carrying the model\'s own earlier answers as assistant messages', async () => {
    const problems: string[] = [];
    const given = new Map<string, string>(); // user message → the answer this server gave to it
    const s = await startFakeOpenAI((req) => {
      const msgs = req.body.messages as { role: string; content: string }[];
      // Check every earlier assistant message is exactly what this server answered to the user message before it.
      for (let i = 0; i < msgs.length; i++) {
        const m = msgs[i]!;
        const expectRole = i % 2 === 0 ? 'user' : 'assistant';
        if (m.role !== expectRole) problems.push(`message ${i} has role ${m.role}`);
        if (m.role === 'assistant' && given.get(msgs[i - 1]!.content) !== m.content) problems.push(`message ${i} is not the server's own answer`);
      }
      if (msgs.some((m) => m.content.includes('Follow-up:'))) problems.push('a turn was concatenated');
      const text = answerFor(req);
      given.set(msgs.at(-1)!.content, text);
      return { kind: 'stream', text, usage: { prompt_tokens: 10 * msgs.length, completion_tokens: 3 } };
    });
    servers.push(s);
    const target = new OpenAITarget({ endpoint: s.url, model: 'm', prices: { input_usd_per_mtok: 1, output_usd_per_mtok: 2 } });
    const out = await run({ suite, target, idle_ms: 0 });
    await target.close();
    assert.deepEqual(problems, []);
    assert.equal(s.seen.length, 5, 'two requests for the two-turn case, three for the three-turn case');
    assert.deepEqual(
      (s.seen[1]!.body.messages as unknown[]),
      [
        { role: 'user', content: 'Name a colour.' },
        { role: 'assistant', content: 'answer to <Name a colour.> after 1 messages' },
        { role: 'user', content: 'Now name another one.' },
      ],
    );
    const [a, b] = out.results;
    assert.equal(a!.turns!.length, 2);
    assert.equal(b!.turns!.length, 3);
    assert.equal(a!.turns![0]!.response, 'answer to <Name a colour.> after 1 messages');
    assert.equal(a!.response, 'answer to <Now name another one.> after 3 messages', 'the case response is the last turn\'s');
    // Sums: tokens and cost over the turns.
    assert.equal(a!.prompt_tokens, 10 + 30);
    assert.equal(a!.completion_tokens, 6);
    const turnCost = a!.turns!.map((t) => t.cost_usd!);
    assert.ok(Math.abs(a!.cost_usd! - (turnCost[0]! + turnCost[1]!)) < 1e-12);
    assert.ok(a!.latency_ms >= a!.turns![0]!.latency_ms);
    // The per-turn record reaches the results line.
    assert.match(caseLine(a!), /"turns":\[\{"response":"answer to <Name a colour.>/);
    assert.deepEqual(JSON.parse(caseLine(a!)), JSON.parse(JSON.stringify(a)));
  });

  test('under a window meter each turn has its own window and the case energy is their sum', async () => {
    const s = await startFakeOpenAI((req) => ({ kind: 'plain', text: answerFor(req) }));
    servers.push(s);
    const target = new OpenAITarget({ endpoint: s.url, model: 'm' });
    // Reading 1 is the suite window; then one window per turn: 2 J, 5 J, then 7 J, null, 1 J.
    const meter = scriptedMeter([{ joules: 100 }, { joules: 2 }, { joules: 5 }, { joules: 7 }, { joules: null }, { joules: 1 }]);
    const out = await run({ suite, target, meter, idle_ms: 0 });
    await target.close();
    assert.equal(meter.starts, 6);
    const [a, b] = out.results;
    assert.deepEqual(a!.turns!.map((t) => t.joules), [2, 5]);
    assert.equal(a!.joules, 7);
    assert.equal(a!.energy_source, 'rapl');
    assert.deepEqual(b!.turns!.map((t) => t.joules), [7, null, 1]);
    assert.equal(b!.joules, null, 'a turn with no reading makes the case energy unknown, never a partial sum');
  });

  test('a failed turn ends the conversation and marks the case failed', async () => {
    const s = await startFakeOpenAI((_req, n) => (n === 1 ? { kind: 'status', status: 500 } : { kind: 'plain', text: 'ok' }));
    servers.push(s);
    const target = new OpenAITarget({ endpoint: s.url, model: 'm' });
    const out = await run({ suite: { ...suite, cases: [threeTurn] }, target, idle_ms: 0 });
    await target.close();
    assert.equal(s.seen.length, 2, 'turn 3 is never asked after turn 2 failed');
    const r = out.results[0]!;
    assert.equal(r.turns!.length, 2);
    assert.equal(r.error?.code, 'E_HTTP');
    assert.equal(r.response, null);
  });

  test('ollama /api/chat is asked turn by turn with its own answers', async () => {
    const fake = new FakeOllama({ models: { tiny: { parameter_count: 1e9 } }, reply: (p) => `said ${p.split(' ')[1] ?? ''}` });
    await fake.start();
    try {
      const target = createOllamaTarget({ model: 'tiny', base_url: fake.url });
      assert.equal(target.conversational, true);
      const out = await run({ suite: { ...suite, cases: [twoTurn] }, target, idle_ms: 0 });
      const chats = fake.seen.filter((r) => r.path === '/api/chat');
      assert.equal(chats.length, 2);
      const second = chats[1]!.body!.messages as { role: string; content: string }[];
      assert.deepEqual(second.map((m) => m.role), ['user', 'assistant', 'user']);
      assert.equal(second[1]!.content, out.results[0]!.turns![0]!.response);
      assert.equal(createOllamaTarget({ model: 'tiny', base_url: fake.url, api: 'generate' }).conversational, false);
    } finally {
      await fake.stop();
    }
  });

  test('the cascade keeps the Follow-up concatenation and says so', async () => {
    const cascade = createReferenceCascade();
    assert.notEqual((cascade as Target).conversational, true);
    assert.equal(cascade.describe().multi_turn, 'follow-up');
    const out = await run({ suite: { ...suite, cases: [twoTurn] }, target: cascade, idle_ms: 0 });
    const r = out.results[0]!;
    assert.equal(r.turns, undefined);
    assert.equal(r.response, 'Name a colour.\nFollow-up: Now name another one.', 'the echo backend saw one joined prompt');
  });

  test('replay of a conversation answers each turn with its recorded answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-mt-'));
    const file = join(dir, 'r.jsonl');
    const line = { record: 'case', phase: 'scored', case_id: 'mt-1', response: 'B', stage: 'neural', error: null, turns: [{ response: 'A' }, { response: 'B' }] };
    writeFileSync(file, JSON.stringify(line) + '\n');
    const target = createReplayTarget(file);
    assert.equal(target.conversational, true);
    const out = await run({ suite: { ...suite, cases: [twoTurn] }, target, idle_ms: 0 });
    assert.deepEqual(out.results[0]!.turns!.map((t) => t.response), ['A', 'B']);
  });
});
