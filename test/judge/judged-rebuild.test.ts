import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { writeMtBench } from './mt-bench-data.js';

const servers: FakeServer[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A judged run with --concurrency writes its case lines as cases finish. Its own report, and a rescore's,
 * must be what `report FILE` rebuilds from the file: the cases aggregated in case order (the bootstrap
 * draws units by position, so file order gave other intervals: 184 against 214 unbounded J/correct
 * resamples here) and the scored passes' wall time from the run_measures line (its throughput).
 */
test('a judged concurrent run: its own report and a rescore equal report FILE', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-judged-rebuild-'));
  dirs.push(dir);
  const files = writeMtBench(dir);
  let k = 0;
  const judge = await startFakeOpenAI(() => ({ kind: 'plain', text: `Fine. [[${(k++ % 9) + 1}]]`, usage: { prompt_tokens: 30, completion_tokens: 3 } }));
  servers.push(judge);
  const cfg = join(dir, 'j.yaml');
  writeFileSync(cfg, `judge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: j\n  cache: c.jsonl\n`);
  const out = join(dir, 'r.json');
  const results = join(dir, 'r.results.jsonl');
  const r = await cli(['run', '--suite', 'mt-bench', '--data', files.questions, '--config', cfg, '--no-history', '-q', '--concurrency', '4', '--repeat', '3', '--meter', 'model', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  // The file is in finishing order, not case order (else this test shows nothing).
  const keys = readFileSync(results, 'utf8').split('\n').filter((l) => l.includes('"record":"case"')).map((l) => JSON.parse(l) as { phase: string; pass: number; index: number });
  const sorted = [...keys].sort((a, b) => Number(a.phase === 'scored') - Number(b.phase === 'scored') || a.pass - b.pass || a.index - b.index);
  assert.notDeepEqual(keys, sorted, 'the case lines are out of case order');

  const rebuilt = async (file = results) => {
    const rb = await cli(['report', '--json', file]);
    assert.equal(rb.code, 0, rb.stderr);
    return JSON.parse(rb.stdout) as Record<string, unknown>;
  };
  const own = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
  assert.ok(own.throughput !== null, 'a concurrent run reports its throughput');
  assert.deepEqual(own, await rebuilt());

  const rs = await cli(['rescore', results, '--judge', cfg, '--data', files.questions, '-q', '-o', join(dir, 'rescored.json')]);
  assert.equal(rs.code, 0, rs.stderr);
  // rescore writes a new results file beside the input: its report is what that file rebuilds to.
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'rescored.json'), 'utf8')), await rebuilt(join(dir, 'r.rescored.results.jsonl')));
});
