import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Case } from '../../../src/core/types.js';
import { CacheStage } from '../../../src/targets/cascade/cache.js';
import { Cascade } from '../../../src/targets/cascade/cascade.js';
import { createEchoTarget } from '../../../src/targets/cascade/echo.js';
import { NeuralStage } from '../../../src/targets/cascade/neural.js';

const make = (): Cascade => new Cascade('t', [new CacheStage({ capacity: 2 }), new NeuralStage(createEchoTarget())]);
const req = (prompt: string) => ({ prompt, case: { id: prompt, expected: null, dataset: 'd', weight: 1, tags: [] } satisfies Case });

it('restore replays admissions and LRU recency, so a resumed cache evicts what the original did', async () => {
  const live = make();
  const recorded = [];
  // A and B are admitted; A is hit (recency refreshed); C evicts the least recently used, which is B.
  for (const p of ['A', 'B', 'A', 'C']) {
    const a = await live.answer(req(p));
    recorded.push({ prompt: p, response: a.text, stage: a.stage ?? null, error: null });
  }
  const cache = live.stages[0] as CacheStage;
  assert.deepEqual(cache.keys(), ['A', 'C']);

  const rebuilt = make();
  for (const r of recorded) rebuilt.restore(req(r.prompt), r);
  assert.deepEqual((rebuilt.stages[0] as CacheStage).keys(), ['A', 'C']);
  // Restoring costs no lookups: the counters only count real answers.
  assert.equal((rebuilt.stages[0] as CacheStage).hits, 0);
});

it('restore ignores failed and unanswered records', () => {
  const c = make();
  c.restore(req('X'), { response: null, stage: null, error: { code: 'E_TARGET', message: 'boom' } });
  c.restore(req('Y'), { response: 'y', stage: 'nonexistent', error: null });
  assert.deepEqual((c.stages[0] as CacheStage).keys(), []);
});
