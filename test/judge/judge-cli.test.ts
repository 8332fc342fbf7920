import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer, type SeenRequest } from '../helpers/fake-openai.js';
import { QUESTIONS, writeMtBench } from './mt-bench-data.js';

const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

type Msg = { role: string; content: string };

/** Which question and turn a user message is. */
function locate(content: string): { qid: number; turn: number } {
  for (const q of QUESTIONS) {
    const t = q.turns.indexOf(content);
    if (t >= 0) return { qid: q.question_id, turn: t + 1 };
  }
  throw new Error(`unknown turn ${content}`);
}

/** The system under test: answers `ans:<qid>:t<turn>`; checks turn 2 carries its own turn-1 answer. */
const sutProblems: string[] = [];
function sutReply(req: SeenRequest) {
  const msgs = req.body.messages as Msg[];
  const { qid, turn } = locate(msgs.at(-1)!.content);
  if (turn === 2) {
    const prior = msgs[1];
    if (msgs.length !== 3 || prior?.role !== 'assistant' || prior.content !== `ans:${qid}:t1`) sutProblems.push(`q${qid} turn 2 without its own answer`);
  }
  return { kind: 'plain' as const, text: `ans:${qid}:t${turn}`, usage: { prompt_tokens: 20, completion_tokens: 4 } };
}

/** The rating the judge gives (qid, turn): fixed per question and turn. */
const rating = (qid: number, turn: number) => ((qid * 3 + turn) % 10) + 1;

/**
 * The judge: finds the last `ans:q:tN` in what it is shown (the answer being rated) and returns a fixed
 * [[n]]; question 6 turn 1 always gets a malformed verdict; question 7 turn 2 gets an out-of-range one
 * first, then a good one on the retry.
 */
const judgeProblems: string[] = [];
function judgeReply(req: SeenRequest, calls: Map<string, number>) {
  if (req.body.temperature !== 0) judgeProblems.push('judge temperature is not 0');
  const msgs = req.body.messages as Msg[];
  if (msgs[0]?.role !== 'system') judgeProblems.push('no system message');
  const user = msgs.at(-1)!.content;
  const marks = [...user.matchAll(/ans:(\d+):t(\d+)/g)];
  const last = marks.at(-1)!;
  const qid = Number(last[1]);
  const turn = Number(last[2]);
  const key = `${qid}:${turn}`;
  const n = (calls.get(key) ?? 0) + 1;
  calls.set(key, n);
  let text = `Reasonable. [[${rating(qid, turn)}]]`;
  if (qid === 6 && turn === 1) text = 'I would rate this highly, maybe an eight.';
  if (qid === 7 && turn === 2 && n === 1) text = 'Off the scale: [[0]].';
  return { kind: 'plain' as const, text, usage: { prompt_tokens: 100, completion_tokens: 10 } };
}

describe('MT-Bench with a judge, end to end through the CLI', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-judge-'));
  const files = writeMtBench(dir);
  const sut = await startFakeOpenAI(sutReply);
  const calls = new Map<string, number>();
  const judge = await startFakeOpenAI((req) => judgeReply(req, calls));
  servers.push(sut, judge);
  const writeCfg = (name: string, model: string, mode = 'single-reference') => {
    const p = join(dir, name);
    writeFileSync(
      p,
      `judge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: ${model}\n  mode: ${mode}\n  cache: judgements.jsonl\n  prices:\n    input_usd_per_mtok: 1\n    output_usd_per_mtok: 10\n`,
    );
    return p;
  };
  const cfg = writeCfg('judge.yaml', 'judge-a');
  const results = join(dir, 'run.results.jsonl');
  const env = { JOULEBENCH_ACTIVE_WATTS: '5' };
  const run = await cli(
    [
      'run', '--suite', 'mt-bench', '--data', files.questions, '--references', files.references,
      '--target', 'openai', '--endpoint', sut.url, '--model', 'sut', '--config', cfg,
      '--meter', 'estimate', '--judge-meter', 'estimate', '--no-idle', '--no-history',
      '--out', join(dir, 'run.json'), '-q',
    ],
    { env },
  );

  test('the run succeeds; every second turn carried the model\'s own first answer', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(sutProblems, []);
    assert.equal(sut.seen.length, 16, 'two requests per question');
  });

  const report = run.code === 0 ? (JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as Record<string, any>) : {};

  test('each turn is rated; score = mean turn rating, weight = score, correct at score >= 7', () => {
    const lines = readFileSync(results, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const cases = lines.filter((l) => l.record === 'case');
    for (const r of cases) {
      const qid = Number(r.case_id.replace('mt-bench-', ''));
      if (qid === 6) {
        assert.equal(r.score, null, 'a judge_error is never a score');
        assert.equal(r.passed, null);
        assert.match(r.meta.judge.error, /could not be read twice/);
        assert.equal(r.meta.judge.replies[0], 'I would rate this highly, maybe an eight.', 'the reply that could not be read is kept');
        continue;
      }
      const want = (rating(qid, 1) + rating(qid, 2)) / 2;
      assert.equal(r.score, want, r.case_id);
      assert.equal(r.weight, want);
      assert.equal(r.passed, want >= 7);
      assert.equal(r.turns.length, 2);
      // The judge's replies (explanation and verdict) beside its ratings; the prompt kept through the judged rewrite.
      assert.deepEqual(r.meta.judge.replies, [1, 2].map((t) => `Reasonable. [[${rating(qid, t)}]]`), r.case_id);
      assert.deepEqual(r.prompt.map((m: Msg) => m.role), ['user', 'assistant', 'user']);
      assert.equal(r.prompt[1].content, `ans:${qid}:t1`);
    }
    assert.equal(calls.get('6:1'), 2, 'a malformed verdict is asked once more, then recorded as judge_error');
    assert.equal(calls.get('7:2'), 2, 'an out-of-range verdict is retried and the retry read');
    const judgeLine = lines.find((l) => l.record === 'judge');
    assert.equal(judgeLine.model, 'openai:judge-a');
    assert.deepEqual(judgeProblems, []);
  });

  test('the report: mt_bench_score, joules per point = total_joules / sum of scores, judge figures apart', () => {
    const scores = QUESTIONS.filter((q) => q.question_id !== 6).map((q) => (rating(q.question_id, 1) + rating(q.question_id, 2)) / 2);
    const points = scores.reduce((a, b) => a + b, 0);
    assert.equal(report.mt_bench_points, points);
    assert.equal(report.mt_bench_score, Math.round((points / scores.length) * 1e4) / 1e4);
    assert.equal(report.mt_bench_judged_count, 7);
    assert.equal(report.mt_bench_unscored_count, 1);
    // The score's bootstrap interval brackets the mean and names its method.
    assert.equal(report.mt_bench_score_ci.method, 'bootstrap');
    assert.ok(report.mt_bench_score_ci.low <= report.mt_bench_score && report.mt_bench_score <= report.mt_bench_score_ci.high);
    assert.ok(report.mt_bench_score_ci.low >= Math.min(...scores) && report.mt_bench_score_ci.high <= Math.max(...scores));
    assert.ok(report.total_joules > 0);
    assert.ok(Math.abs(report.joules_per_mt_bench_point - report.total_joules / points) < 1e-5);
    assert.equal(report.judge_pass, 7);
    // The judge: 8 questions × 2 turns, plus one retry each for q6 t1 and q7 t2.
    assert.equal(report.judge.requests, 18);
    assert.equal(report.judge.model, 'openai:judge-a');
    assert.match(report.judge.prompt_hash, /^sha256:/);
    assert.equal(report.judge_prompt_tokens, 1800);
    assert.ok(Math.abs(report.judge_usd - (1800 * 1 + 180 * 10) / 1e6) < 1e-12);
    assert.ok(report.judge_joules > 0);
    assert.equal(report.judge_energy_source, 'estimate');
    // Never added: the SUT's total is its own measurement (the suite window, closed before the judge was asked,
    // or the sum of its case windows), whatever the judge spent.
    const caseJ = readFileSync(results, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.record === 'case').reduce((t, r) => t + r.joules, 0);
    const receiptNow = JSON.parse(readFileSync(join(dir, 'run.receipt.json'), 'utf8'));
    const windowJ = receiptNow.energy.suite_window?.joules;
    assert.ok(
      Math.abs(report.total_joules - caseJ) < 1e-5 || (report.energy_basis === 'suite_window' && Math.abs(report.total_joules - windowJ) < 1e-5),
      `${report.total_joules} vs cases ${caseJ} / window ${windowJ}`,
    );
    assert.ok(Math.abs(report.judge_share_joules - report.judge_joules / (report.judge_joules + report.total_joules)) < 1e-6);
    assert.equal(report.prompt_tokens, 16 * 20, 'SUT tokens only');
    const math = report.mt_bench_by_category.math;
    assert.equal(math.judged_count, 1);
    assert.ok(Math.abs(math.joules_per_mt_bench_point - math.total_joules / math.points) < 1e-5);
    const receipt = JSON.parse(readFileSync(join(dir, 'run.receipt.json'), 'utf8'));
    assert.equal(receipt.judge.model, 'openai:judge-a');
    assert.equal(receipt.judge.prompt_hash, report.judge.prompt_hash);
    assert.equal(receipt.judge.temperature, 0);
  });

  test('single-reference: the reference answer reaches the judge for questions that have one, only those', () => {
    const asked = judge.seen.map((s) => (s.body.messages as Msg[]).at(-1)!.content);
    const math = asked.filter((u) => u.includes('ans:4:t1'));
    assert.ok(math.length > 0 && math.every((u) => u.includes('<reference>') && u.includes('51')));
    const writing = asked.filter((u) => u.includes('ans:1:t1'));
    assert.ok(writing.length > 0 && writing.every((u) => !u.includes('<reference>')));
  });

  test('rescore with the same judge asks only what was never judged (the judge_error), and gives the same scores', async () => {
    const before = judge.seen.length;
    const r = await cli(['rescore', results, '--judge', cfg, '--data', files.questions, '--references', files.references, '-q', '--judge-meter', 'estimate'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(judge.seen.length - before, 2, 'only question 6 turn 1 (a judge_error is not a judgement): asked and retried');
    const again = JSON.parse(r.stdout);
    assert.equal(again.mt_bench_score, report.mt_bench_score);
    // The run's suite window comes from its receipt: the same energy basis, the same joules per point.
    assert.equal(again.total_joules, report.total_joules);
    assert.equal(again.joules_per_mt_bench_point, report.joules_per_mt_bench_point);
    assert.equal(again.judge.cached, 15);
  });

  test('rescore without the receipt: the run\'s idle and suite window come from the results file\'s run_measures line', async () => {
    const receipt = join(dir, 'run.receipt.json');
    renameSync(receipt, `${receipt}.away`);
    try {
      const r = await cli(['rescore', results, '--judge', cfg, '--data', files.questions, '--references', files.references, '-q', '--judge-meter', 'estimate'], { env });
      assert.equal(r.code, 0, r.stderr);
      const again = JSON.parse(r.stdout);
      assert.equal(again.idle, report.idle);
      assert.equal(again.energy_basis, report.energy_basis);
      assert.equal(again.total_joules, report.total_joules);
      assert.equal(again.joules_per_mt_bench_point, report.joules_per_mt_bench_point);
    } finally {
      renameSync(`${receipt}.away`, receipt);
    }
  });

  test('--judge-pass moves the correctness threshold and is stated in the report; nothing new is asked', async () => {
    const before = judge.seen.length;
    const r = await cli(['rescore', results, '--judge', cfg, '--data', files.questions, '--references', files.references, '-q', '--judge-pass', '4'], { env });
    assert.equal(r.code, 0, r.stderr);
    const low = JSON.parse(r.stdout);
    assert.equal(low.judge_pass, 4);
    assert.equal(judge.seen.length - before, 2, 'only the judge_error case is asked again');
    const scores = QUESTIONS.filter((q) => q.question_id !== 6).map((q) => (rating(q.question_id, 1) + rating(q.question_id, 2)) / 2);
    assert.equal(low.correct_count, scores.filter((s) => s >= 4).length);
    assert.equal(report.correct_count, scores.filter((s) => s >= 7).length);
    assert.notEqual(low.correct_count, report.correct_count);
  });

  test('a different judge model asks again', async () => {
    const before = judge.seen.length;
    const other = writeCfg('judge-b.yaml', 'judge-b');
    const r = await cli(['rescore', results, '--judge', other, '--data', files.questions, '--references', files.references, '-q'], { env });
    assert.equal(r.code, 0, r.stderr);
    // 16 turns, plus the retry of question 6's malformed verdict (question 7's out-of-range one was the first call only).
    assert.equal(judge.seen.length - before, 17);
    assert.equal(JSON.parse(r.stdout).judge.model, 'openai:judge-b');
    assert.equal(JSON.parse(r.stdout).judge_joules, null, 'no --judge-meter and an endpoint that reports no energy: unknown, not 0');
  });

  test("the judge's key (credentials_ref) reaches the judge and nothing else", async () => {
    const KEY = 'sk-judge-SECRET-51c0ffee';
    const keyed = join(dir, 'keyed.yaml');
    writeFileSync(keyed, `judge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: judge-k\n  credentials_ref: env:JB_JUDGE_KEY\n  cache: keyed.jsonl\n`);
    const before = judge.seen.length;
    const r = await cli(['rescore', results, '--judge', keyed, '--data', files.questions, '--references', files.references], { env: { ...env, JB_JUDGE_KEY: KEY } });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(judge.seen.slice(before).every((s) => s.headers.authorization === `Bearer ${KEY}`));
    assert.equal((r.stdout + r.stderr).includes(KEY), false);
    for (const f of readdirSync(dir)) assert.equal(readFileSync(join(dir, f), 'utf8').includes(KEY), false, `key in ${f}`);
    const missing = await cli(['rescore', results, '--judge', keyed, '--data', files.questions, '--references', files.references], { env });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /keyed\.yaml: judge\.credentials_ref: environment variable JB_JUDGE_KEY is not set/);
  });

  test('rescore refuses a bad report setting in the header (one line naming file and key, exit 2) before asking the judge or rewriting the file', async () => {
    const lines = readFileSync(results, 'utf8').split('\n');
    for (const [key, value, want] of [
      ['bootstrap', -3, /header key bootstrap must be a whole number >= 0/],
      ['bootstrap_max_units', 'lots', /header key bootstrap_max_units must be a whole number >= 0 or "inf"/],
    ] as const) {
      const bad = join(dir, `bad-${key}.results.jsonl`);
      const text = [JSON.stringify({ ...JSON.parse(lines[0]!), [key]: value }), ...lines.slice(1)].join('\n');
      writeFileSync(bad, text);
      const before = judge.seen.length;
      const r = await cli(['rescore', bad, '--judge', cfg, '--data', files.questions, '--references', files.references, '-q'], { env });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, want);
      assert.match(r.stderr, new RegExp(`bad-${key}\\.results\\.jsonl: line 1`));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.equal(judge.seen.length, before, 'the judge was not asked');
      assert.equal(readFileSync(bad, 'utf8'), text, 'the file was not rewritten');
    }
  });

  test('rescore refuses a malformed run_measures line (one line, exit 2) before asking a judge or rewriting the file', async () => {
    const lines = readFileSync(results, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"record":"run_measures"'));
    assert.ok(at > 0, 'the run wrote its run_measures line');
    const m = JSON.parse(lines[at]!);
    const bad = join(dir, 'bad-measures.results.jsonl');
    const text = [...lines.slice(0, at), JSON.stringify({ ...m, idle: { ...m.idle, status: 'bogus' } }), ...lines.slice(at + 1)].join('\n');
    writeFileSync(bad, text);
    // A judge model never asked before: without the early check every case would be judged first.
    const fresh = writeCfg('judge-fresh.yaml', 'judge-fresh');
    const before = judge.seen.length;
    const r = await cli(['rescore', bad, '--judge', fresh, '--data', files.questions, '--references', files.references, '-q', '--judge-meter', 'estimate'], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /bad-measures\.results\.jsonl: the run_measures line's idle\.status is not one of/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(judge.seen.length, before, 'the judge was not asked');
    assert.equal(readFileSync(bad, 'utf8'), text, 'the file was not rewritten');
  });

  test("rescore of a traced run's file keeps its power_trace, as report FILE does", async () => {
    const lines = readFileSync(results, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"record":"run_measures"'));
    const power_trace = { interval_ms: 100, domains: ['gpu-0'], rows: [['2026-01-01T00:00:00.100Z', 'idle', 100, 40], ['2026-01-01T00:00:00.300Z', 'scored', 200, 250]] };
    const traced = join(dir, 'traced.results.jsonl');
    writeFileSync(traced, [...lines.slice(0, at), JSON.stringify({ record: 'power_trace', power_trace }), ...lines.slice(at)].join('\n'));
    const r = await cli(['rescore', traced, '--judge', cfg, '--data', files.questions, '--references', files.references, '-q'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).power_trace, power_trace);
    const back = await cli(['report', '--json', traced], { env });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(JSON.parse(back.stdout).power_trace, power_trace);
  });

  test('rescore refuses to write when the results file changes while it is judged, and leaves nothing half-written', async () => {
    const changing = join(dir, 'changing.results.jsonl');
    writeFileSync(changing, readFileSync(results));
    const lastCase = readFileSync(results, 'utf8').split('\n').findLast((l) => l.includes('"record":"case"'))!;
    let appended = false;
    const meddler = await startFakeOpenAI((req) => {
      if (!appended) writeFileSync(changing, lastCase + '\n', { flag: 'a' });
      appended = true;
      return judgeReply(req, new Map());
    });
    servers.push(meddler);
    const p = join(dir, 'meddled.yaml');
    writeFileSync(p, `judge:\n  kind: openai\n  endpoint: ${meddler.url}\n  model: judge-m\n  mode: single-reference\n  cache: meddled.jsonl\n`);
    const r = await cli(['rescore', changing, '--judge', p, '--data', files.questions, '--references', files.references, '-q'], { env });
    assert.ok(appended, 'the judge was asked');
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /changing\.results\.jsonl: the file changed while it was judged/);
    assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('changing.') && f !== 'changing.results.jsonl'), [], 'no judged file and no temporary file');
  });

  test('rescore refuses a results file written for other questions', async () => {
    const other = join(dir, 'other-q.jsonl');
    writeFileSync(other, JSON.stringify(QUESTIONS[0]) + '\n');
    const r = await cli(['rescore', results, '--judge', cfg, '--data', other, '-q'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /written for suite "mt-bench" sha256:[0-9a-f]+, the suite given/);
  });

  test('a concurrent judged run keeps its throughput in the judged report, and rescore gives it back from the file', async () => {
    const out = join(dir, 'conc.json');
    const r = await cli(
      [
        'run', '--suite', 'mt-bench', '--data', files.questions, '--references', files.references,
        '--target', 'openai', '--endpoint', sut.url, '--model', 'sut', '--config', cfg, '--concurrency', '2',
        '--meter', 'estimate', '--judge-meter', 'estimate', '--no-idle', '--no-history', '--out', out, '-q',
      ],
      { env },
    );
    assert.equal(r.code, 0, r.stderr);
    const own = JSON.parse(readFileSync(out, 'utf8'));
    assert.ok(own.mt_bench_score !== undefined, 'the judged report');
    // The run's wall time is its own measurement: the judged report must not lose it (it was null).
    assert.ok(own.throughput !== null && own.throughput.wall_ms > 0, JSON.stringify(own.throughput));
    const measures = readFileSync(join(dir, 'conc.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)).findLast((l) => l.record === 'run_measures');
    assert.equal(own.throughput.wall_ms, Math.round(measures.scored_wall_ms * 1000) / 1000);
    const again = await cli(['rescore', join(dir, 'conc.results.jsonl'), '--judge', cfg, '--data', files.questions, '--references', files.references, '-q', '--judge-meter', 'estimate'], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout).throughput, own.throughput);
  });

  test('a bad judge block is one line naming the file and key, before anything runs', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'judge:\n  kind: openai\n  model: j\n  mode: triple\n');
    const r = await cli(['run', '--suite', 'mt-bench', '--data', files.questions, '--config', bad, '-q', '--no-history']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.yaml: judge\.mode must be "single", "single-reference" or "pairwise"/);
  });
});
