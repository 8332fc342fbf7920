import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { killMidRun } from '../helpers/kill-mid-run.js';
import { readResultsFile } from '../../src/runner/results-file.js';
import { jb } from './helpers.js';
import { timelessReport } from '../helpers/timeless.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-resume-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');

// 30 router cases × (1 warmup + 120 scored passes): long enough that the kill lands mid-run.
const REPEAT = '120';
const TOTAL = 30 * 121;
const runArgs = (results: string, out: string): string[] => ['run', '-q', '--no-history', '--suite', 'router', '--repeat', REPEAT, '--results', results, '--out', out];

it('a run killed with SIGKILL resumes to the report of an uninterrupted run, nothing re-run or duplicated', async () => {
  const results = join(dir, 'killed.results.jsonl');
  const signal = await killMidRun(runArgs(results, join(dir, 'killed.json')), results, 60_000, home);
  assert.equal(signal, 'SIGKILL', 'the run finished before the kill landed; raise REPEAT');
  const before = readResultsFile(results);
  assert.ok(before.results.length > 0 && before.results.length < TOTAL, `killed mid-run (${before.results.length} of ${TOTAL})`);
  assert.equal(existsSync(join(dir, 'killed.json')), false, 'no report from a killed run');

  const resumed = jb([...runArgs(results, join(dir, 'resumed.json')), '--resume'], { home });
  assert.equal(resumed.code, 0, resumed.stderr);

  const full = jb(runArgs(join(dir, 'full.results.jsonl'), join(dir, 'full.json')), { home });
  assert.equal(full.code, 0, full.stderr);
  assert.deepEqual(timelessReport(join(dir, 'resumed.json')), timelessReport(join(dir, 'full.json')));

  const after = readResultsFile(results);
  assert.equal(after.torn_bytes, 0);
  const keys = after.results.map((r) => `${r.phase}:${r.pass}:${r.index}`);
  assert.equal(keys.length, TOTAL);
  assert.equal(new Set(keys).size, TOTAL, 'no (phase, pass, index) twice');
  // The lines written before the kill are untouched: the resumed run appended after them.
  assert.deepEqual(after.results.slice(0, before.results.length), before.results);
  const receipt = JSON.parse(readFileSync(join(dir, 'resumed.receipt.json'), 'utf8')) as { resumed: { finished_before: number } };
  assert.equal(receipt.resumed.finished_before, before.results.length);
});

it('refuses to resume a results file of another suite or config, with the reason (exit 2)', () => {
  const results = join(dir, 'small.results.jsonl');
  assert.equal(jb(['run', '-q', '--no-history', '--suite', 'router', '--results', results, '--out', join(dir, 'small.json')], { home }).code, 0);
  const other = jb(['run', '-q', '--no-history', '--suite', 'mt', '--resume', results, '--out', join(dir, 'x.json')], { home });
  assert.equal(other.code, 2);
  assert.match(other.stderr, /^joulebench: .*small\.results\.jsonl: cannot resume: it was written for suite "router"/m);
  const config = jb(['run', '-q', '--no-history', '--suite', 'router', '--warmup', '0', '--resume', results, '--out', join(dir, 'x.json')], { home });
  assert.equal(config.code, 2);
  assert.match(config.stderr, /cannot resume: .*config.*warmup 1 → 0/);
  const nothing = jb(['run', '-q', '--no-history', '--resume'], { home });
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /--resume needs the results file/);
});
