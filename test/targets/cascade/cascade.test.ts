import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Case, Stage } from '../../../src/core/types.js';
import { Cascade } from '../../../src/targets/cascade/cascade.js';
import { createEchoTarget } from '../../../src/targets/cascade/echo.js';
import { createReferenceCascade } from '../../../src/targets/cascade/reference.js';
import { targetContract } from '../contract.js';

const c: Case = { id: 'x', prompt: 'p', expected: null, dataset: 'd', weight: 1, tags: [] };

function fixed(id: string, text: string | null, energy_uj: number | null, calls: string[]): Stage {
  return {
    id,
    tryAnswer: () => {
      calls.push(id);
      return { text, energy_uj };
    },
    describe: () => ({ stage: id }),
  };
}

describe('Cascade', () => {
  targetContract('reference cascade', () => createReferenceCascade());
  targetContract('echo', () => createEchoTarget());

  it('tries stages in order and stops at the first that answers', async () => {
    const calls: string[] = [];
    const cascade = new Cascade('t', [fixed('a', null, 1, calls), fixed('b', 'B', 2, calls), fixed('c', 'C', 4, calls)]);
    const a = await cascade.answer({ prompt: 'q', case: c });
    assert.deepEqual(calls, ['a', 'b']);
    assert.equal(a.text, 'B');
    assert.equal(a.stage, 'b');
  });

  it('sums the modelled energy of every stage tried, labelled model', async () => {
    const cascade = new Cascade('t', [fixed('a', null, 1000, []), fixed('b', 'B', 2000, [])]);
    const a = await cascade.answer({ prompt: 'q', case: c });
    assert.deepEqual(a.energy, { joules: 0.003, source: 'model' });
    assert.deepEqual(
      a.trace?.map((t) => [t.stage, t.hit, t.energy_uj]),
      [
        ['a', false, 1000],
        ['b', true, 2000],
      ],
    );
  });

  it('makes the total unknown when any stage tried has unknown energy', async () => {
    const cascade = new Cascade('t', [fixed('a', null, 1000, []), fixed('b', 'B', null, [])]);
    assert.equal((await cascade.answer({ prompt: 'q', case: c })).energy?.joules, null);
  });

  it('reference: cache → kv → graph → neural, and the cache memoises neural answers', async () => {
    const cascade = createReferenceCascade();
    assert.deepEqual(
      cascade.stages.map((s) => s.id),
      ['cache', 'kv', 'graph', 'neural'],
    );
    const ask = (prompt: string) => cascade.answer({ prompt, case: c });
    assert.equal((await ask('What is the default port for SSH?')).stage, 'kv');
    assert.equal((await ask('Who discovered penicillin?')).stage, 'graph');
    const first = await ask('Repeat exactly: ping');
    assert.equal(first.stage, 'neural');
    assert.equal(first.energy?.joules, 50.056); // 1 mJ + 5 mJ + 50 mJ of lookups, then 50 J
    const second = await ask('Repeat exactly: ping');
    assert.equal(second.stage, 'cache');
    assert.equal(second.text, first.text);
    assert.equal(second.energy?.joules, 0.001);
    // Store answers ran no model: zero tokens and $0 are known, not missing; the echo backend reports neither.
    assert.deepEqual((await ask('Who discovered penicillin?')).usage, { prompt_tokens: 0, completion_tokens: 0 });
    assert.equal((await ask('Who discovered penicillin?')).cost_usd, 0);
    assert.equal(first.cost_usd, 0, 'the echo backend bills nothing');
    // KV answers are never cached: the store keeps answering.
    assert.equal((await ask('What is the default port for SSH?')).stage, 'kv');
  });
});
