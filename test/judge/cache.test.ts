import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { JudgementCache, judgementKey, type CachedJudgement } from '../../src/judge/cache.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-jcache-'));
const base: CachedJudgement = {
  key: 'k',
  judge: 'openai:j',
  prompt_hash: 'sha256:p',
  text: '[[8]]',
  rating: 8,
  choice: null,
  error: null,
  requests: 1,
  joules: null,
  energy_source: 'none',
  cost_usd: 0.001,
  prompt_tokens: 10,
  completion_tokens: 2,
};

test('the key changes with the judge model, the prompt hash and the messages', () => {
  const m = [{ role: 'user' as const, content: 'q a' }];
  const k = judgementKey('openai:j', 'sha256:p', m);
  assert.notEqual(k, judgementKey('openai:other', 'sha256:p', m));
  assert.notEqual(k, judgementKey('openai:j', 'sha256:q', m));
  assert.notEqual(k, judgementKey('openai:j', 'sha256:p', [{ role: 'user', content: 'q b' }]));
  assert.equal(k, judgementKey('openai:j', 'sha256:p', [{ role: 'user', content: 'q a' }]));
});

test('judgements persist across instances; judge errors are kept on disk but never served', () => {
  const path = join(dir, 'c.jsonl');
  const c = new JudgementCache(path);
  c.put(base);
  c.put({ ...base, key: 'bad', rating: null, text: 'hmm', error: { code: 'judge_error', message: 'unreadable' } });
  const again = new JudgementCache(path);
  assert.equal(again.get('k')?.rating, 8);
  assert.equal(again.get('bad'), undefined);
  assert.equal(readFileSync(path, 'utf8').trim().split('\n').length, 2);
});

test('a torn last line (a crash mid-write) is ignored; a forged verdict out of range is refused', () => {
  const torn = join(dir, 'torn.jsonl');
  writeFileSync(torn, JSON.stringify(base) + '\n{"key":"half');
  assert.equal(new JudgementCache(torn).size, 1);
  for (const forged of [{ ...base, rating: 11 }, { ...base, rating: 0 }, { ...base, choice: 'D' }, { ...base, rating: null }]) {
    const p = join(dir, 'forged.jsonl');
    writeFileSync(p, JSON.stringify(forged) + '\n');
    assert.throws(() => new JudgementCache(p), (e: unknown) => e instanceof JoulebenchError && /line 1: not a judgement joulebench wrote/.test(e.message));
  }
});
