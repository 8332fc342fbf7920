import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Case } from '../../src/core/types.js';
import { caseResult, NO_FAILURE } from '../../src/runner/run.js';

const c: Case = { id: 'c', dataset: 'd', prompt: 'p', expected: 'x', weight: 1, tags: [] };

test('per-token energy joins a copy of the target meta: same keys in the same order, the target meta untouched', () => {
  const meta = { e2e_ms: 1.5, streamed: true };
  const r = caseResult(c, 0, 'scored', 0, { text: 'x', usage: { prompt_tokens: 3, completion_tokens: 2 }, energy: { joules: 4, source: 'model' }, meta }, NO_FAILURE, 2, null, false);
  assert.deepEqual(r.meta, { e2e_ms: 1.5, streamed: true, j_per_output_token: 2, output_tokens_per_j: 0.5 });
  assert.deepEqual(Object.keys(r.meta!), ['e2e_ms', 'streamed', 'j_per_output_token', 'output_tokens_per_j']);
  assert.deepEqual(meta, { e2e_ms: 1.5, streamed: true }, 'the answer keeps its own meta');
  const unknown = caseResult(c, 0, 'scored', 0, { text: 'x', usage: { prompt_tokens: 3, completion_tokens: 2 }, meta }, NO_FAILURE, 2, null, false);
  assert.deepEqual(unknown.meta, { e2e_ms: 1.5, streamed: true, j_per_output_token: null, output_tokens_per_j: null });
});

test('per-token energy: a meta with an own __proto__ key (from JSON) keeps it as a key, as a spread would', () => {
  const meta = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
  const r = caseResult(c, 0, 'scored', 0, { text: 'x', usage: { prompt_tokens: 1, completion_tokens: 1 }, meta }, NO_FAILURE, 2, null, false);
  assert.equal(Object.getPrototypeOf(r.meta), Object.prototype);
  assert.equal((r.meta as { polluted?: unknown }).polluted, undefined);
  assert.deepEqual(Object.keys(r.meta!), ['__proto__', 'a', 'j_per_output_token', 'output_tokens_per_j']);
  assert.equal(JSON.stringify(r.meta), '{"__proto__":{"polluted":true},"a":1,"j_per_output_token":null,"output_tokens_per_j":null}');
});
