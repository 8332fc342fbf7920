import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Suite } from '../../src/core/types.js';
import { run } from '../../src/runner/run.js';
import { createTarget } from '../../src/targets/registry.js';
import { targetContract } from './contract.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-replay-'));
const suite: Suite = {
  name: 't', version: '1', scorer: 'choice', source: 'test',
  cases: ['a', 'b', 'c'].map((id) => ({ id, prompt: `q ${id}`, expected: 'B', dataset: 't', choices: ['1', '2', '3', '4'], weight: 1, tags: [] })),
};

test('replays a fixture of {id, answer}; a missing answer is an error for that case only', async () => {
  const f = join(dir, 'fixture.json');
  writeFileSync(f, JSON.stringify([{ id: 'a', answer: 'B' }, { id: 'b', answer: 'A' }]));
  const target = await createTarget({ kind: 'replay', answers: f });
  const { report, results } = await run({ suite, target });
  assert.deepEqual(results.map((r) => r.passed), [true, false, false]);
  assert.equal(results[2]!.error?.code, 'E_REPLAY_MISSING');
  assert.equal(report.error_count, 1);
  assert.equal(results[0]!.stage, 'neural');
});

test('replays a previous results JSONL (first scored, non-errored line per case)', async () => {
  const f = join(dir, 'prev.results.jsonl');
  const lines = [
    { record: 'header', format: 'joulebench-results/1' },
    { record: 'case', phase: 'warmup', case_id: 'a', response: 'D', error: null, stage: 'neural' },
    { record: 'case', phase: 'scored', case_id: 'a', response: 'B', error: null, stage: 'neural' },
    { record: 'case', phase: 'scored', case_id: 'b', response: null, error: { code: 'E_HTTP', message: 'x' }, stage: null },
    { record: 'case', phase: 'scored', case_id: 'c', response: 'b', error: null, stage: 'graph' },
  ];
  writeFileSync(f, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const { results } = await run({ suite, target: await createTarget({ kind: 'replay', answers: f }) });
  assert.deepEqual(results.map((r) => [r.passed, r.stage]), [[true, 'neural'], [false, null], [true, 'graph']]);
});

test('a replay without answers, or with a broken file, is E_CONFIG / E_INPUT naming it', async () => {
  await assert.rejects(createTarget({ kind: 'replay' }), /target\.answers is required/);
  const f = join(dir, 'broken.jsonl');
  writeFileSync(f, '{"id":"a","answer":"B"}\n{nope\n');
  await assert.rejects(createTarget({ kind: 'replay', answers: f }), /broken\.jsonl: line 2: not valid JSON/);
});

const contractFixture = join(dir, 'contract.json');
writeFileSync(contractFixture, JSON.stringify([{ id: 'contract-1', answer: 'Paris' }]));
targetContract('replay', () => createTarget({ kind: 'replay', answers: contractFixture }));

test('a target kind that is only an Object.prototype name is unknown (E_CONFIG), not a crash', async () => {
  for (const kind of ['constructor', 'toString', '__proto__']) {
    await assert.rejects(createTarget({ kind }), (e: Error & { code?: string }) => e.code === 'E_CONFIG' && /unknown target/.test(e.message), kind);
  }
});
