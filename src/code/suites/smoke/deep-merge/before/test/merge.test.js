import assert from 'node:assert/strict';
import { test } from 'node:test';
import { merge } from '../src/merge.js';

test('nested keys merge', () => {
  assert.deepEqual(merge({ db: { host: 'a', port: 1 } }, { db: { port: 2 } }), { db: { host: 'a', port: 2 } });
});
test('arguments are left alone', () => {
  const base = { a: 1, n: { x: 1 } };
  merge(base, { a: 2, n: { y: 2 } });
  assert.deepEqual(base, { a: 1, n: { x: 1 } });
});
