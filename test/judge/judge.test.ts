import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { JudgementCache } from '../../src/judge/cache.js';
import { Judge } from '../../src/judge/judge.js';
import { ratingPrompt } from '../../src/judge/prompts.js';
import { createJudgeFromConfig } from '../../src/session/judge-setup.js';
import { createEchoTarget } from '../../src/targets/cascade/echo.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

test('an ollama judge is asked at temperature 0 over /api/chat, with a system message', async () => {
  const fake = new FakeOllama({ models: { judge: { parameter_count: 1e9 } }, reply: () => '[[6]]' });
  await fake.start();
  try {
    // An explicit cache in a temporary folder: the default is under $JOULEBENCH_HOME (the user's ~/.joulebench).
    const cache = join(mkdtempSync(join(tmpdir(), 'jb-ojudge-')), 'c.jsonl');
    const setup = await createJudgeFromConfig({ kind: 'ollama', model: 'judge', base_url: fake.url, mode: 'single' }, 'cfg.yaml', { judgeCache: cache }, {});
    try {
      const { judgement } = await setup.judge.ask(ratingPrompt({ questions: ['q'], answers: ['a'] }).messages, 'rating');
      assert.equal(judgement.rating, 6);
      const chat = fake.seen.find((s) => s.path === '/api/chat');
      assert.ok(chat, JSON.stringify(fake.seen.map((s) => s.path)));
      assert.equal((chat!.body!.options as { temperature?: number }).temperature, 0);
      assert.equal((chat!.body!.messages as { role: string }[])[0]!.role, 'system');
      assert.equal(setup.info.model, 'ollama:judge');
      assert.equal(setup.describe.temperature, 0);
    } finally {
      await setup.close();
    }
  } finally {
    await fake.stop();
  }
});

test('a judge with no conversation state gets instructions and material as one prompt; an echo never gives a verdict', async () => {
  const echo = createEchoTarget({ energy_j: 2 });
  const judge = new Judge({ target: echo, mode: 'single', cache: new JudgementCache(null) });
  const { judgement } = await judge.ask(ratingPrompt({ questions: ['q'], answers: ['a'] }).messages, 'rating');
  // The echo repeats its prompt, instructions included: they show the format as [[N]], never a readable
  // verdict, so a judge that parrots them gives no score — asked twice, then judge_error.
  assert.equal(judgement.rating, null);
  assert.equal(judgement.error?.code, 'judge_error');
  assert.equal(judge.requests, 2);
  assert.equal(judgement.joules, 4, 'both attempts are charged to the judge');
  assert.match(judgement.text ?? '', /\[\[N\]\]/);
  // Pairwise instructions list all three choices: an echo of them is not one verdict either.
  const pj = new Judge({ target: echo, mode: 'pairwise', cache: new JudgementCache(null) });
  const { comparePrompt } = await import('../../src/judge/prompts.js');
  const pair = await pj.ask(comparePrompt({ questions: ['q'], answersA: ['a'], answersB: ['b'] }).messages, 'choice');
  assert.equal(pair.judgement.choice, null);
  await assert.rejects(createJudgeFromConfig({ kind: 'cascade', mode: 'single' }, 'cfg.yaml', { judgeCache: join(tmpdir(), 'unused.jsonl') }, {}), /judge\.kind cannot be a cascade/);
});
