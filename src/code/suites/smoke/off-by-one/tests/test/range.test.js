import assert from 'node:assert/strict';
import { test } from 'node:test';
import { range } from '../src/range.js';

test('range excludes its end', () => assert.deepEqual(range(0, 3), [0, 1, 2]));
test('an empty range is empty', () => assert.deepEqual(range(2, 2), []));
