import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { buildSuite, buildTargetSpec } from '../../src/session/setup.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-run-setup-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'run.yaml');

test('params.subjects naming no question: the message names the config file first', () => {
  writeFileSync(join(dir, 'mmlu.jsonl'), JSON.stringify({ question: 'q?', subject: 'alpha', choices: ['a', 'b', 'c', 'd'], answer: 0 }) + '\n');
  const cfg = parseConfig({ params: { data: 'mmlu.jsonl', subjects: ['nosuch'] } }, path);
  assert.throws(
    () => buildSuite({ suite: 'mmlu' }, cfg),
    (e: Error & { code?: string }) => e.code === 'E_CONFIG' && e.message.startsWith(`${path}: params.subjects: no questions for "nosuch"`),
  );
});

test('mode: mock without target.answers is the deterministic mock; with answers (config or command line), a replay', () => {
  const cfg = parseConfig({ target: { mode: 'mock' } }, path);
  assert.deepEqual(buildTargetSpec({ suite: 'mt' }, cfg, {}), { kind: 'mock' });
  assert.deepEqual(buildTargetSpec({ suite: 'mt', answers: 'a.jsonl' }, cfg, {}), { kind: 'replay', answers: 'a.jsonl' });
});
