import assert from 'node:assert/strict';
import { test } from 'node:test';
import { titleCase } from '../src/title.js';

test('every word is capitalised', () => assert.equal(titleCase('hello world'), 'Hello World'));
test('the rest is lower-cased', () => assert.equal(titleCase('the QUICK fox'), 'The Quick Fox'));
