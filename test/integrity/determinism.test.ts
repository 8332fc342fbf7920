import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ResultsHeader } from '../../src/core/types.js';
import { cli } from '../helpers/cli.js';
import { result } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-determinism-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const header: ResultsHeader = {
  record: 'header',
  format: 'joulebench-results/1',
  suite: 's',
  suite_version: '1',
  suite_digest: 'sha256:abc',
  target: 'openai:m',
  config_digest: 'sha256:def',
  warmup: 0,
  repeats: 2,
  meter: 'rapl',
  concurrency: 4,
};
// Latencies, energies and tokens that differ per case, as a concurrent run writes them: in completion order.
const cases = Array.from({ length: 40 }, (_, i) =>
  result({
    pass: i % 2,
    index: Math.floor(i / 2),
    case_id: `c${Math.floor(i / 2)}`,
    passed: i % 3 !== 0,
    joules: 0.1 * ((i * 7) % 11) + 0.01,
    energy_source: 'rapl',
    latency_ms: 10 + ((i * 37) % 23) + 0.123,
    ttft_ms: 3 + (i % 5) * 0.7,
    prompt_tokens: 10 + i,
    completion_tokens: 3 + (i % 4),
    cost_usd: 0.000001 * (i + 1),
  }),
);
const write = (name: string, order: number[]): string => {
  const path = join(dir, name);
  writeFileSync(path, [header, ...order.map((i) => cases[i]), { record: 'end', scored: cases.length }].map((l) => JSON.stringify(l)).join('\n') + '\n');
  return path;
};

describe('determinism: the aggregate of a given results file is byte-identical', () => {
  it('aggregated twice, in two processes, and from the same lines in another order: the same bytes', async () => {
    const inOrder = write('a.results.jsonl', cases.map((_, i) => i));
    const shuffled = write('b.results.jsonl', cases.map((_, i) => (i * 17) % cases.length));
    const one = await cli(['report', inOrder, '--json']);
    const two = await cli(['report', inOrder, '--json']);
    const three = await cli(['report', shuffled, '--json']);
    for (const r of [one, two, three]) assert.equal(r.code, 0, r.stderr);
    assert.ok(one.stdout.length > 500);
    assert.equal(two.stdout, one.stdout);
    assert.equal(three.stdout, one.stdout, 'the case order, not the write order, decides the aggregate');
    const report = JSON.parse(one.stdout) as { case_count: number; format: string };
    assert.equal(report.case_count, 40);
    assert.equal(report.format, 'joulebench-report/1.1');
    assert.equal(readFileSync(inOrder, 'utf8').split('\n').length, 43);
  });
});

describe('determinism: floating-point sums follow the case order', () => {
  it('a big reading first or last in the file gives the same total (sums are not associative)', async () => {
    const big = Array.from({ length: 40 }, (_, i) => result({ index: i, case_id: `c${i}`, joules: i === 0 ? 1e9 : 1e-7, energy_source: 'rapl' }));
    const path = (name: string, order: number[]): string => {
      const p = join(dir, name);
      writeFileSync(p, [{ ...header, repeats: 1, concurrency: 1 }, ...order.map((i) => big[i]), { record: 'end', scored: 40 }].map((l) => JSON.stringify(l)).join('\n') + '\n');
      return p;
    };
    const first = await cli(['report', path('big-first.results.jsonl', big.map((_, i) => i)), '--json']);
    const last = await cli(['report', path('big-last.results.jsonl', big.map((_, i) => (i + 1) % 40)), '--json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(last.stdout, first.stdout);
    assert.equal((JSON.parse(first.stdout) as { total_joules: number }).total_joules, 1000000000.000005, 'summed in case order: 1e9 first, then 39 × 1e-7');
  });
});
