import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { Case, CaseResult } from '../../src/core/types.js';
import { JudgementCache } from '../../src/judge/cache.js';
import { Judge } from '../../src/judge/judge.js';
import { BUILTIN_PROMPTS, readPromptSet } from '../../src/judge/prompt-set.js';
import { judgePairwise } from '../../src/judge/score.js';
import { pairwiseBlock } from '../../src/judge/summary.js';
import { OpenAITarget } from '../../src/targets/openai/target.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer, type SeenRequest } from '../helpers/fake-openai.js';
import { result } from '../helpers/results.js';

const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const cases: Case[] = [1, 2, 3].map((i) => ({ id: `q${i}`, turns: [`question ${i} turn 1`, `question ${i} turn 2`], expected: null, dataset: i === 3 ? 'math' : 'writing', weight: 1, tags: [] }));
const caseMap = new Map(cases.map((c) => [c.id, c]));

/** Run A answers well on q1 and q3, run B on q2 (the word GOOD marks the better answer). */
function runOf(good: (i: number) => boolean): CaseResult[] {
  return cases.map((c, i) => {
    const a = [`${c.id} t1 ${good(i + 1) ? 'GOOD' : 'weak'}`, `${c.id} t2 ${good(i + 1) ? 'GOOD' : 'weak'}`];
    return result({ case_id: c.id, dataset: c.dataset, index: i, response: a[1]!, turns: a.map((response) => ({ response, latency_ms: 1, ttft_ms: null, prompt_tokens: null, completion_tokens: null, joules: null, energy_source: 'none', cost_usd: null, attempts: 1, error: null })) });
  });
}
const runA = runOf((i) => i !== 2);
const runB = runOf((i) => i === 2);

/** The A and B blocks of what the judge is shown. */
function shown(req: SeenRequest): { a: string; b: string } {
  const user = (req.body.messages as { content: string }[]).at(-1)!.content;
  const a = /<conversation_a>([\s\S]*?)<\/conversation_a>|<answer_a>([\s\S]*?)<\/answer_a>/.exec(user)!;
  const b = /<conversation_b>([\s\S]*?)<\/conversation_b>|<answer_b>([\s\S]*?)<\/answer_b>/.exec(user)!;
  return { a: a[1] ?? a[2]!, b: b[1] ?? b[2]! };
}
/** The last answer in a shown conversation (the one being compared). */
const lastAnswer = (block: string) => block.trim().split('### Assistant\n').at(-1)!;

async function judgeWith(reply: (req: SeenRequest) => string): Promise<{ judge: Judge; server: FakeServer }> {
  const server = await startFakeOpenAI((req) => ({ kind: 'plain', text: reply(req), usage: { prompt_tokens: 50, completion_tokens: 5 } }));
  servers.push(server);
  const target = new OpenAITarget({ endpoint: server.url, model: 'pj', prices: { input_usd_per_mtok: 2, output_usd_per_mtok: 8 } });
  return { judge: new Judge({ target, mode: 'pairwise', cache: new JudgementCache(null) }), server };
}
const info = { model: 'openai:pj', mode: 'pairwise', prompt_hash: 'x', prompts: BUILTIN_PROMPTS.label, pass: 7 };

describe('pairwise judging with the position swap', () => {
  test('each compared turn is asked in both orders; a fair judge gives consistent wins', async () => {
    const { judge, server } = await judgeWith((req) => {
      const s = shown(req);
      return lastAnswer(s.a).includes('GOOD') ? 'A is better [[A]]' : lastAnswer(s.b).includes('GOOD') ? '[[B]]' : '[[C]]';
    });
    const { verdicts, tally } = await judgePairwise({ a: runA, b: runB, cases: caseMap, judge });
    assert.equal(server.seen.length, 12, '3 questions × 2 turns × 2 orders');
    // The second request of each pair shows the same answers with A and B swapped.
    for (let i = 0; i < server.seen.length; i += 2) {
      const first = shown(server.seen[i]!);
      const second = shown(server.seen[i + 1]!);
      assert.equal(first.a, second.b);
      assert.equal(first.b, second.a);
    }
    const block = pairwiseBlock(verdicts, tally, info);
    assert.equal(block.a_wins, 4);
    assert.equal(block.b_wins, 2);
    assert.equal(block.ties, 0);
    assert.equal(block.inconsistent, 0);
    assert.equal(block.a_win_rate, Math.round((4 / 6) * 1e6) / 1e6);
    assert.deepEqual(block.by_category.math, { a_wins: 2, b_wins: 0, ties: 0, undecided: 0 });
    assert.ok(Math.abs(block.judge_usd! - (12 * 50 * 2 + 12 * 5 * 8) / 1e6) < 1e-12);
  });

  test('a judge that always picks the first position gets ties, not wins: the swap cancels the bias', async () => {
    const { judge } = await judgeWith(() => '[[A]]');
    const { verdicts, tally } = await judgePairwise({ a: runA, b: runB, cases: caseMap, judge });
    const block = pairwiseBlock(verdicts, tally, info);
    assert.equal(block.a_wins, 0);
    assert.equal(block.b_wins, 0);
    assert.equal(block.ties, 6);
    assert.equal(block.inconsistent, 6);
  });

  test('an unreadable verdict leaves the turn undecided, never a win', async () => {
    const { judge } = await judgeWith(() => 'They are both fine.');
    const { verdicts, tally } = await judgePairwise({ a: runA, b: runB, cases: caseMap, judge });
    const block = pairwiseBlock(verdicts, tally, info);
    assert.equal(block.undecided, 6);
    assert.equal(block.a_wins + block.b_wins + block.ties, 0);
    assert.equal(block.judge.error_count, 12);
    assert.equal(block.judge.requests, 24, 'each unreadable verdict asked twice');
  });

  test('the CLI: rescore A --against B with judge.mode pairwise', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-pair-'));
    const { server } = await judgeWith((req) => (lastAnswer(shown(req).a).includes('GOOD') ? '[[A]]' : '[[B]]'));
    const suitePath = join(dir, 'suite.json');
    writeFileSync(suitePath, JSON.stringify({ name: 'pairs', scorer: 'judge', cases: cases.map(({ id, turns, expected, dataset }) => ({ id, turns, expected, dataset })) }));
    const answers = (good: (i: number) => boolean) => {
      const p = join(dir, `answers-${good(2)}.jsonl`);
      writeFileSync(p, cases.map((c, i) => JSON.stringify({ id: c.id, answer: `${c.id} ${good(i + 1) ? 'GOOD' : 'weak'}` })).join('\n') + '\n');
      return p;
    };
    const files = [answers((i) => i !== 2), answers((i) => i === 2)];
    const results: string[] = [];
    for (const [i, a] of files.entries()) {
      const out = join(dir, `run${i}.results.jsonl`);
      const r = await cli(['run', '--suite', suitePath, '--target', 'replay', '--answers', a, '--results', out, '-q', '--no-history', '--out', join(dir, `run${i}.json`)]);
      assert.equal(r.code, 0, r.stderr);
      results.push(out);
    }
    const cfg = join(dir, 'pj.yaml');
    writeFileSync(cfg, `judge:\n  kind: openai\n  endpoint: ${server.url}\n  model: pj\n  mode: pairwise\n  cache: c.jsonl\n`);
    const noSuite = await cli(['rescore', results[0]!, '--against', results[1]!, '--judge', cfg, '-q']);
    assert.equal(noSuite.code, 2);
    assert.match(noSuite.stderr, /written for suite "pairs": give its file with --suite FILE/);
    const r = await cli(['rescore', results[0]!, '--against', results[1]!, '--judge', cfg, '--suite', suitePath, '-q']);
    assert.equal(r.code, 0, r.stderr);
    const block = JSON.parse(r.stdout);
    assert.equal(block.a_wins, 2);
    assert.equal(block.b_wins, 1);
    assert.equal(server.seen.length, 6, 'one comparison per question (answers given to all turns at once), both orders');
    const missing = await cli(['rescore', results[0]!, '--judge', cfg, '--suite', suitePath, '-q']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /judge\.mode pairwise needs --against/);
  });
});

describe("pairwise judging with prompts in FastChat's file form", () => {
  test('the pair prompts are chosen by category and turn; [[A]] anywhere wins over an earlier [[B]], as FastChat reads it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-pw-fc-'));
    const prompts = join(dir, 'judge_prompts.jsonl');
    const entry = (name: string, fields: string[]) => JSON.stringify({ name, type: 'pairwise', system_prompt: `SYS ${name}`, prompt_template: fields.map((f) => `{${f}}`).join('|'), output_format: '[[A]]' });
    writeFileSync(
      prompts,
      [
        entry('pair-v2', ['question', 'answer_a', 'answer_b']),
        entry('pair-math-v1', ['question', 'ref_answer_1', 'answer_a', 'answer_b']),
        entry('pair-v2-multi-turn', ['question_1', 'answer_a_1', 'question_2', 'answer_a_2', 'answer_b_1', 'answer_b_2']),
        entry('pair-math-v1-multi-turn', ['ref_answer_1', 'ref_answer_2', 'answer_a_2', 'answer_b_2']),
      ].join('\n') + '\n',
    );
    const withRefs = new Map([...caseMap].map(([id, c]) => [id, c.dataset === 'math' ? { ...c, reference: ['R1', 'R2'] } : c]));
    const server = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Maybe [[B]]; on reflection [[A]]' }));
    servers.push(server);
    const target = new OpenAITarget({ endpoint: server.url, model: 'pj' });
    const judge = new Judge({ target, mode: 'pairwise', prompts: readPromptSet(prompts, 'pairwise'), cache: new JudgementCache(null) });
    const { verdicts } = await judgePairwise({ a: runA, b: runB, cases: withRefs, judge });
    const sent = server.seen.map((r) => (r.body.messages as { content: string }[]).map((m) => m.content));
    const q3 = sent.filter((m) => m[0]!.includes('math'));
    assert.deepEqual(q3.map((m) => m[1]), ['R1|q3 t1 GOOD|q3 t1 weak', 'R1|q3 t1 weak|q3 t1 GOOD', 'R1|R2|q3 t2 GOOD|q3 t2 weak', 'R1|R2|q3 t2 weak|q3 t2 GOOD'].map((s, i) => (i < 2 ? `question 3 turn 1|${s}` : s)));
    assert.equal(sent.filter((m) => m[0] === 'SYS pair-v2-multi-turn').length, 4);
    // The judge always names the first-shown answer: both orders disagree, so every turn is a tie.
    assert.ok(verdicts.every((v) => v.error === null && v.turns.every((t) => t.winner === 'tie' && t.a_first === 'a' && t.b_first === 'b')));
  });
});
