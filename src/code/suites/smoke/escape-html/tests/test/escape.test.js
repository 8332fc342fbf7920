import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml } from '../src/escape.js';

test('tags', () => assert.equal(escapeHtml('<b>&</b>'), '&lt;b&gt;&amp;&lt;/b&gt;'));
test('quotes', () => assert.equal(escapeHtml(`"it's"`), '&quot;it&#39;s&quot;'));
