import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Case, Suite } from '../../src/core/types.js';
import { runLoad } from '../../src/load/driver.js';
import type { LoadMeta } from '../../src/load/record.js';
import { loadBlockFromResults } from '../../src/load/rebuild.js';
import { renderLoadTable } from '../../src/load/table.js';
import { createModelMeter } from '../../src/meters/model.js';
import { MemorySink } from '../../src/runner/results-file.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';
import { QUESTIONS, writeMtBench } from '../judge/mt-bench-data.js';

const THINK_MS = 150;

function conversationSuite(): Suite {
  const turns = [['say alpha', 'say bravo'], ['fail charlie', 'say delta'], ['say echo', 'say foxtrot', 'say golf']];
  const cases: Case[] = turns.map((t, i) => ({ id: `c${i}`, turns: t, expected: null, dataset: 'conv', weight: 1, tags: [] }));
  return { name: 'conv-test', version: '1', scorer: 'exact', cases, source: 'test' };
}

describe('load run with --think-time-ms: multi-turn cases are conversations', () => {
  let server: LoadServer;
  before(async () => {
    server = await startLoadServer((prompt) => ({ ttft_ms: 5, tpot_ms: 2, tokens: 3, answer: prompt.split(' ')[1]!, ...(prompt.startsWith('fail') ? { status: 400 } : {}) }));
  });
  after(() => server.close());

  it('sends each later turn after the think time with the model\'s own answers; a failed turn ends its conversation', async () => {
    const sink = new MemorySink();
    const target = new OpenAITarget({ endpoint: server.url, model: 'm' });
    const load = { request_rate: Infinity, burstiness: 1, seed: 1, max_concurrency: null, num_requests: 3, percentiles: [50], slo: null, ttft_token: 'content' as const, think_time_ms: THINK_MS };
    const out = await runLoad({ suite: conversationSuite(), target, meter: createModelMeter(), sink, load, idle_ms: 0 });

    const lines = sink.results.filter((r) => r.phase === 'scored');
    const turnOf = (id: string) => lines.filter((r) => r.case_id === id).map((r) => (r.meta!.load as LoadMeta).turn);
    assert.deepEqual(turnOf('c0'), [1, 2]);
    assert.deepEqual(turnOf('c1'), [1], 'a failed first turn sends no second');
    assert.deepEqual(turnOf('c2'), [1, 2, 3]);
    assert.ok(lines.find((r) => r.case_id === 'c1')!.error !== null);
    assert.ok(!server.seen.some((s) => s.prompt === 'say delta'), 'the turn after a failed one is never sent');

    const seen = (prompt: string) => server.seen.find((s) => s.prompt === prompt)!;
    const answer = (id: string, turn: number) => lines.find((r) => r.case_id === id && (r.meta!.load as LoadMeta).turn === turn)!.response;
    assert.deepEqual(seen('say alpha').messages, [{ role: 'user', content: 'say alpha' }]);
    assert.deepEqual(seen('say bravo').messages, [
      { role: 'user', content: 'say alpha' },
      { role: 'assistant', content: answer('c0', 1) },
      { role: 'user', content: 'say bravo' },
    ]);
    assert.equal(answer('c0', 1), 'alpha . .');
    assert.deepEqual(seen('say golf').messages.map((m) => m.content), ['say echo', answer('c2', 1), 'say foxtrot', answer('c2', 2), 'say golf']);
    for (const [prev, next] of [['say alpha', 'say bravo'], ['say echo', 'say foxtrot'], ['say foxtrot', 'say golf']] as const) {
      const answered = seen(prev).writes.at(-1)!.at_ms;
      assert.ok(seen(next).at_ms - answered >= THINK_MS, `"${next}" arrived ${seen(next).at_ms - answered} ms after "${prev}" was answered`);
    }

    assert.equal(out.report.load.serving.completed, 5);
    assert.equal(out.report.load.serving.failed, 1);
    assert.deepEqual(out.report.load.conversations, { count: 3, turns_per_conversation_mean: 2, think_time_ms: THINK_MS });
    const rebuilt = loadBlockFromResults(out.header, sink.results, sink.notes);
    assert.deepEqual(rebuilt, out.report.load, 'the results file rebuilds the same load block');
    assert.match(renderLoadTable(out.report.load), /load: 3 conversations at inf[^\n]*\n  3 conversations started, 2 turns each on average, 150 ms think time/);
  });

  it('the CLI asks MT-Bench as conversations under --think-time-ms and refuses it without a load run or with --dataset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-load-conv-'));
    try {
      const files = writeMtBench(dir);
      const before = server.seen.length;
      const base = ['run', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--idle-ms', '1', '-q'];
      const r = await cli([...base, '--suite', 'mt-bench', '--data', files.questions, '--request-rate', 'inf', '--num-requests', '2', '--think-time-ms', '20', '-o', join(dir, 'load.json')]);
      assert.equal(r.code, 0, r.stderr);
      const sent = server.seen.slice(before);
      assert.equal(sent.length, 4);
      const second = sent.find((s) => s.prompt === QUESTIONS[0]!.turns[1])!;
      assert.deepEqual(second.messages.map((m) => m.role), ['user', 'assistant', 'user']);
      const report = JSON.parse(readFileSync(join(dir, 'load.json'), 'utf8')) as { load: { conversations: unknown } };
      assert.deepEqual(report.load.conversations, { count: 2, turns_per_conversation_mean: 2, think_time_ms: 20 });
      // The results file, a line a turn, reads back and rebuilds the same block.
      const file = readResultsFile(join(dir, 'load.results.jsonl'));
      assert.deepEqual(loadBlockFromResults(file.header!, file.results, file.other), report.load);
      const closed = await cli([...base, '--suite', 'mt-bench', '--data', files.questions, '--think-time-ms', '20']);
      assert.equal(closed.code, 2);
      assert.match(closed.stderr, /--think-time-ms/);
      const dataset = await cli([...base, '--request-rate', '10', '--num-requests', '2', '--dataset', 'random', '--input-len', '5', '--output-len', '5', '--think-time-ms', '20']);
      assert.equal(dataset.code, 2);
      assert.match(dataset.stderr, /--think-time-ms needs multi-turn cases \(--dataset sharegpt, or a suite such as mt-bench\); --dataset random prompts are single-turn/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
