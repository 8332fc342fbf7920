import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Stack } from '../src/stack.js';

test('last in, first out', () => {
  const s = new Stack();
  s.push(1);
  s.push(2);
  assert.equal(s.peek(), 2);
  assert.equal(s.pop(), 2);
  assert.equal(s.size, 1);
});
test('empty', () => {
  const s = new Stack();
  assert.equal(s.isEmpty(), true);
  assert.equal(s.pop(), undefined);
});
