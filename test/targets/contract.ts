import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Case, Target } from '../../src/core/types.js';

/**
 * The behaviour every Target must show. Each implementation's test calls this with a factory;
 * `skip` names cases that do not apply, each with its reason.
 */
export function targetContract(name: string, make: () => Promise<Target> | Target, skip: Record<string, string> = {}): void {
  const c: Case = { id: 'contract-1', prompt: 'What is the capital of France?', expected: 'Paris', dataset: 'contract', weight: 1, tags: [] };
  const maybe = (title: string, fn: () => Promise<void>) =>
    skip[title] ? it(`${name}: ${title}`, { skip: skip[title] }, fn) : it(`${name}: ${title}`, fn);

  maybe('answers with a string', async () => {
    const t = await make();
    const a = await t.answer({ prompt: c.prompt!, case: c });
    assert.equal(typeof a.text, 'string');
    await t.close?.();
  });
  maybe('has a stable id and kind', async () => {
    const t = await make();
    assert.ok(t.id.length > 0);
    assert.ok(t.kind.length > 0);
    assert.equal((await make()).id, t.id);
  });
  maybe('describes itself as plain JSON with no secrets', async () => {
    const t = await make();
    const d = t.describe();
    assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
    assert.doesNotMatch(JSON.stringify(d), /api[_-]?key|secret|password|bearer/i);
  });
  maybe('labels any energy it reports, and never reports 0 for unknown', async () => {
    const t = await make();
    const a = await t.answer({ prompt: c.prompt!, case: c });
    if (a.energy) {
      assert.ok(a.energy.source.length > 0);
      assert.ok(a.energy.joules === null || (Number.isFinite(a.energy.joules) && a.energy.joules >= 0));
      if (a.energy.joules === null) assert.notEqual(a.energy.source, 'model', 'a null figure should not claim a model produced it');
    }
  });
}
