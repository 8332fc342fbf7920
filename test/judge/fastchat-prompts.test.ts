import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { FASTCHAT_JUDGE_PROMPTS_SHA256 } from '../../src/judge/prompt-set.js';
import { MT_BENCH_FILES } from '../../src/suites/mt-bench-fetch.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer, type SeenRequest } from '../helpers/fake-openai.js';

/**
 * The judge with prompts in FastChat's judge_prompts.jsonl form. The prompt file is this test's own
 * wording (no FastChat text ships with joulebench); what the judge is sent must come from it, filled
 * the way FastChat's run_judge_single fills it.
 */

const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

type Msg = { role: string; content: string };

/** Our own prompts, one per name FastChat's gen_judgment.py uses, with its fields (and a literal {{brace}}). */
const PROMPTS = [
  { name: 'single-v1', type: 'single', system_prompt: 'SYS general', prompt_template: 'G1 Q<{question}> A<{answer}> {{literal}}', output_format: '[[rating]]' },
  { name: 'single-math-v1', type: 'single', system_prompt: 'SYS math', prompt_template: 'M1 Q<{question}> R<{ref_answer_1}> A<{answer}>', output_format: '[[rating]]' },
  {
    name: 'single-v1-multi-turn',
    type: 'single',
    system_prompt: 'SYS general mt',
    prompt_template: 'G2 Q1<{question_1}> A1<{answer_1}> Q2<{question_2}> A2<{answer_2}>',
    output_format: '[[rating]]',
  },
  {
    name: 'single-math-v1-multi-turn',
    type: 'single',
    system_prompt: 'SYS math mt',
    prompt_template: 'M2 Q1<{question_1}> R1<{ref_answer_1}> Q2<{question_2}> R2<{ref_answer_2}> A1<{answer_1}> A2<{answer_2}>',
    output_format: '[[rating]]',
  },
  { name: 'pair-v2', type: 'pairwise', system_prompt: 'P', prompt_template: '{question}{answer_a}{answer_b}', output_format: '[[A]]' },
];

/** A writing question that carries an inline reference (as 5 extraction, 4 stem and 1 roleplay question in FastChat's file do) and a math one. */
const QUESTIONS = [
  { question_id: 81, category: 'writing', turns: ['Write a haiku about frost.', 'Now one about thaw.'], reference: ['REF-WRITING-1', 'REF-WRITING-2'] },
  { question_id: 111, category: 'math', turns: ['What is 6 times 7?', 'Halve it.'], reference: ['42', '21'] },
];

function locate(content: string): { qid: number; turn: number } {
  for (const q of QUESTIONS) {
    const t = q.turns.indexOf(content);
    if (t >= 0) return { qid: q.question_id, turn: t + 1 };
  }
  throw new Error(`unknown turn ${content}`);
}

describe("the judge with FastChat's prompt file form, end to end through the CLI", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-fcp-'));
  const questions = join(dir, 'question.jsonl');
  writeFileSync(questions, QUESTIONS.map((q) => JSON.stringify(q)).join('\n') + '\n');
  // Where `joulebench fetch mt-bench` puts it: beside question.jsonl, so the judge picks it up unasked.
  writeFileSync(join(dir, 'judge_prompts.jsonl'), PROMPTS.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const sut = await startFakeOpenAI((req: SeenRequest) => {
    const { qid, turn } = locate((req.body.messages as Msg[]).at(-1)!.content);
    return { kind: 'plain', text: `ans:${qid}:t${turn}` };
  });
  // FastChat's backup form: a single-bracket rating.
  const judge = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Fine work. Rating: [7]' }));
  servers.push(sut, judge);
  const cfg = join(dir, 'judge.yaml');
  writeFileSync(cfg, `judge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: jm\n  mode: single-reference\n  cache: judgements.jsonl\n`);
  const run = await cli(
    ['run', '--suite', 'mt-bench', '--data', questions, '--target', 'openai', '--endpoint', sut.url, '--model', 'sut', '--config', cfg, '--meter', 'estimate', '--no-idle', '--no-history', '--out', join(dir, 'run.json'), '-q'],
    { env: { JOULEBENCH_ACTIVE_WATTS: '5' } },
  );
  const sent = judge.seen.map((r) => r.body.messages as Msg[]);

  test('the prompt text is the file\'s, filled as FastChat fills it, chosen by category and turn', () => {
    assert.equal(run.code, 0, run.stderr);
    const got = sent.map((m) => [m[0]!.content, m[1]!.content]).sort();
    const want = [
      ['SYS general', 'G1 Q<Write a haiku about frost.> A<ans:81:t1> {literal}'],
      ['SYS general mt', 'G2 Q1<Write a haiku about frost.> A1<ans:81:t1> Q2<Now one about thaw.> A2<ans:81:t2>'],
      ['SYS math', 'M1 Q<What is 6 times 7?> R<42> A<ans:111:t1>'],
      ['SYS math mt', 'M2 Q1<What is 6 times 7?> R1<42> Q2<Halve it.> R2<21> A1<ans:111:t1> A2<ans:111:t2>'],
    ].sort();
    assert.deepEqual(got, want);
    assert.ok(sent.every((m) => m.length === 2 && m[0]!.role === 'system' && m[1]!.role === 'user'));
  });

  test('a writing question with a reference is judged without it', () => {
    assert.ok(!JSON.stringify(sent).includes('REF-WRITING'), 'the writing reference reached the judge');
  });

  test('`Rating: [7]` scores 7; the report has per-turn scores and names the prompt file as not comparable', () => {
    const report = JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'));
    assert.equal(report.mt_bench_score, 7);
    assert.equal(report.mt_bench_unscored_count, 0);
    assert.equal(report.mt_bench_turns.turn_1.score, 7);
    assert.equal(report.mt_bench_turns.turn_2.score, 7);
    assert.equal(report.mt_bench_turns.average.count, 4);
    assert.equal(report.judge.prompts.source, 'file', 'our own wording is not FastChat\'s pinned file');
    assert.equal(report.judge.prompts.comparable, false);
    assert.match(report.judge.prompts.sha256, /^[0-9a-f]{64}$/);
    const results = readFileSync(join(dir, 'run.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const math = results.find((l) => l.case_id === 'mt-bench-111');
    assert.deepEqual(math.meta.judge.prompts, ['single-math-v1', 'single-math-v1-multi-turn']);
  });

  test('the terminal report shows turn 1, turn 2 and the prompt set', async () => {
    const r = await cli(['report', join(dir, 'run.results.jsonl')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /turn 1\s+7\.00/);
    assert.match(r.stdout, /turn 2\s+7\.00/);
    assert.match(r.stdout, /judge prompts\s+file\s+prompts file .*not comparable/);
  });

  test('judge.prompts: builtin uses joulebench\'s own prompts, labelled not comparable', async () => {
    const before = judge.seen.length;
    const r = await cli(['rescore', join(dir, 'run.results.jsonl'), '--judge', cfg, '--data', questions, '--judge-prompts', 'builtin', '-q']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.judge.prompts, { source: 'builtin', path: null, sha256: null, comparable: false });
    assert.ok(judge.seen.slice(before).every((q) => !(q.body.messages as Msg[])[0]!.content.startsWith('SYS')));
  });

  test('a prompts file without a name the mode needs is refused in one line', async () => {
    const bad = join(dir, 'bad-prompts.jsonl');
    writeFileSync(bad, PROMPTS.slice(0, 3).map((p) => JSON.stringify(p)).join('\n') + '\n');
    const r = await cli(['rescore', join(dir, 'run.results.jsonl'), '--judge', cfg, '--data', questions, '--judge-prompts', bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad-prompts\.jsonl: no prompt named "single-math-v1-multi-turn"/);
  });

  test('published judgments in FastChat\'s form: the show_result.py table, with our run beside it', async () => {
    // Model x: turn 1 8, 6 (and a -1 left out); turn 2 5. Model y: turn 1 9; turn 2 7, 4.
    const rows = [
      ['x', 81, 1, 8], ['x', 111, 1, 6], ['x', 112, 1, -1], ['x', 81, 2, 5],
      ['y', 81, 1, 9], ['y', 81, 2, 7], ['y', 111, 2, 4],
    ] as const;
    const file = join(dir, 'gpt-4_single.jsonl');
    writeFileSync(
      file,
      rows.map(([model, question_id, turn, score]) => JSON.stringify({ question_id, model, judge: ['gpt-4', turn === 1 ? 'single-v1' : 'single-v1-multi-turn'], user_prompt: 'u', judgment: 'j', score, turn, tstamp: 1 })).join('\n') + '\n',
    );
    // show_result.py, computed here: drop score -1, mean per (model, turn), and per model over both turns.
    const kept = rows.filter((r) => r[3] !== -1);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const expect = (m: string) => ({
      turn_1: mean(kept.filter((r) => r[0] === m && r[2] === 1).map((r) => r[3])),
      turn_2: mean(kept.filter((r) => r[0] === m && r[2] === 2).map((r) => r[3])),
      average: mean(kept.filter((r) => r[0] === m).map((r) => r[3])),
    });
    const r = await cli(['rescore', '--judgments', file, join(dir, 'run.results.jsonl')]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.dropped, 1);
    assert.deepEqual(out.judges, ['gpt-4 / single-v1', 'gpt-4 / single-v1-multi-turn']);
    for (const m of ['x', 'y']) {
      const row = out.models.find((x: { model: string }) => x.model === m);
      for (const k of ['turn_1', 'turn_2', 'average'] as const) assert.equal(row[k].toFixed(4), expect(m)[k].toFixed(4), `${m} ${k}`);
    }
    assert.deepEqual(out.models.map((x: { model: string }) => x.model), ['openai:sut', 'y', 'x'], 'sorted by average, highest first');
    assert.match(r.stderr, /y\s+9\.0000\s+5\.5000\s+6\.6667/);
    assert.match(r.stderr, /judge openai:jm/);

    // `report` reads the same file and prints the same table (and the same JSON with --json).
    const rep = await cli(['report', file, join(dir, 'run.results.jsonl')]);
    assert.equal(rep.code, 0, rep.stderr);
    assert.equal(rep.stdout, r.stderr);
    const repJson = await cli(['report', file, join(dir, 'run.results.jsonl'), '--json']);
    assert.deepEqual(JSON.parse(repJson.stdout), out);
    const md = await cli(['report', file, '--md']);
    assert.equal(md.code, 2);
    assert.match(md.stderr, /gpt-4_single\.jsonl: a judgments file prints its per-model table/);
  });

  test("a published model's answers (model_answer/<model>.jsonl) replayed and judged by the same judge as our run", async () => {
    const answers = join(dir, 'pub.jsonl');
    const rows = QUESTIONS.map((q) => ({ question_id: q.question_id, answer_id: `a${q.question_id}`, model_id: 'pub', choices: [{ index: 0, turns: [`pub:${q.question_id}:t1`, `pub:${q.question_id}:t2`] }], tstamp: 1 }));
    writeFileSync(answers, rows.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const before = judge.seen.length;
    const r = await cli(['run', '--suite', 'mt-bench', '--data', questions, '--target', 'replay', '--answers', answers, '--config', cfg, '--meter', 'estimate', '--no-idle', '--no-history', '--out', join(dir, 'pub.json'), '-q'], {
      env: { JOULEBENCH_ACTIVE_WATTS: '5' },
    });
    assert.equal(r.code, 0, r.stderr);
    const asked = judge.seen.slice(before).map((x) => (x.body.messages as Msg[])[1]!.content);
    assert.ok(asked.includes('G2 Q1<Write a haiku about frost.> A1<pub:81:t1> Q2<Now one about thaw.> A2<pub:81:t2>'), asked.join('\n'));
    assert.ok(asked.includes('M1 Q<What is 6 times 7?> R<42> A<pub:111:t1>'), asked.join('\n'));
    assert.equal(JSON.parse(readFileSync(join(dir, 'pub.json'), 'utf8')).mt_bench_turns.average.count, 4);
    writeFileSync(join(dir, 'bad-answers.jsonl'), JSON.stringify({ question_id: 81, choices: [{ index: 0, turns: [] }] }) + '\n');
    const bad = await cli(['run', '--suite', 'mt-bench', '--data', questions, '--target', 'replay', '--answers', join(dir, 'bad-answers.jsonl'), '--config', cfg, '--meter', 'estimate', '--no-idle', '--no-history', '-q']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad-answers\.jsonl: line 1: choices\[0\]\.turns must be a non-empty list of strings/);
  });

  test('fetch mt-bench pins judge_prompts.jsonl at the same commit as question.jsonl', () => {
    const prompts = MT_BENCH_FILES.find((f) => f.name === 'judge_prompts.jsonl')!;
    const q = MT_BENCH_FILES.find((f) => f.name === 'question.jsonl')!;
    assert.equal(prompts.sha256, FASTCHAT_JUDGE_PROMPTS_SHA256);
    assert.equal(prompts.url.split('/')[5], q.url.split('/')[5]);
    assert.match(prompts.url, /\/fastchat\/llm_judge\/data\/judge_prompts\.jsonl$/);
  });
});
