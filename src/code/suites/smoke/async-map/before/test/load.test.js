import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadAll } from '../src/load.js';

const later = (v, ms) => new Promise((r) => setTimeout(() => r(v), ms));

test('every result, in order', async () => {
  assert.deepEqual(await loadAll([1, 2, 3], (id) => later(id * 2, 4 - id)), [2, 4, 6]);
});
