import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { QUESTIONS, writeMtBench } from './mt-bench-data.js';

const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

test('the cascade answers MT-Bench as one Follow-up prompt; the judge rates that one answer against both turns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-cascade-judge-'));
  const files = writeMtBench(dir);
  const judge = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Echoes the question. [[2]]', usage: { prompt_tokens: 30, completion_tokens: 3 } }));
  servers.push(judge);
  const cfg = join(dir, 'j.yaml');
  writeFileSync(cfg, `judge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: j\n  cache: c.jsonl\n`);
  const r = await cli(['run', '--suite', 'mt-bench', '--data', files.questions, '--config', cfg, '--no-history', '-q', '--out', join(dir, 'r.json')]);
  assert.equal(r.code, 0, r.stderr);
  // Warmup 1 (the cascade's default) is never judged: one judgement per scored case.
  assert.equal(judge.seen.length, QUESTIONS.length);
  const user = (judge.seen[0]!.body.messages as { content: string }[]).at(-1)!.content;
  const q = QUESTIONS.find((x) => user.includes(x.turns[0]!))!;
  assert.ok(user.includes(q.turns[1]!), 'both turns are shown to the judge');
  assert.match(user, /Follow-up:/, 'the answer rated is the echo of the joined prompt');
  const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
  assert.equal(report.mt_bench_score, 2);
  assert.equal(report.accuracy_pct, 0);
  // The reference cascade's modelled energy: 50 J echo + stage attempts per case, divided by 2 points a case.
  assert.equal(report.joules_per_mt_bench_point, Math.round((report.total_joules / (2 * QUESTIONS.length)) * 1e6) / 1e6);
  const receipt = JSON.parse(readFileSync(join(dir, 'r.receipt.json'), 'utf8'));
  assert.equal(receipt.target.multi_turn, 'follow-up');
});
