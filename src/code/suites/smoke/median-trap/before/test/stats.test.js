import assert from 'node:assert/strict';
import { test } from 'node:test';
import { median } from '../src/stats.js';

test('unsorted input', () => assert.equal(median([3, 1, 2]), 2));
test('numbers sort as numbers', () => assert.equal(median([10, 9, 2, 1]), 5.5));
test('the input is left alone', () => {
  const xs = [3, 1, 2];
  median(xs);
  assert.deepEqual(xs, [3, 1, 2]);
});
