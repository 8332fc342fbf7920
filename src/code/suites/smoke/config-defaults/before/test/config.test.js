import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config.js';

test('defaults are numbers', () => assert.strictEqual(loadConfig({}).retries, 3));
test('an explicit 0 is kept', () => assert.strictEqual(loadConfig({ retries: 0 }).retries, 0));
