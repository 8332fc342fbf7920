import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cmp-'));
const report = (jpc: number | null, p95: number | null, acc: number | null) => ({
  case_count: 10,
  total_joules: 1,
  joules_per_correct: jpc,
  accuracy_pct: acc,
  latency_p50_ms: 1,
  latency_p95_ms: p95,
  latency_p99_ms: 1,
  stage_distribution: { cache: 0, kv: 0, graph: 0, neural: 10 },
});
function write(name: string, value: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
  return p;
}

describe('joulebench compare (spawned)', () => {
  it('two runs of one suite at different versions: the refusal names both versions, not only "different cases"', async () => {
    const at = (version: string, digest: string) => ({ ...report(1, 1, 50), suite: { name: 'mmlu', version, digest } });
    const r = await cli(['compare', write('v1.json', at('2024-01', 'sha256:' + 'a'.repeat(64))), write('v2.json', at('2024-06', 'sha256:' + 'b'.repeat(64)))]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /ran suite mmlu at version 2024-01 and at version 2024-06: the suite versions differ/);
  });

  it('prints baseline, candidate and the three deltas', async () => {
    const r = await cli(['compare', '--baseline', write('a.json', report(20, 100, 80)), '--candidate', write('b.json', report(10, 150, 70))]);
    assert.equal(r.code, 0, r.stderr);
    const { baseline, candidate, joules_per_correct_pct, latency_p95_pct, accuracy_pp_delta, energy_sources_match, ...paired } = JSON.parse(r.stdout);
    assert.deepEqual({ baseline, candidate, joules_per_correct_pct, latency_p95_pct, accuracy_pp_delta, energy_sources_match }, {
      baseline: { joules_per_correct: 20, latency_p95_ms: 100, accuracy_pct: 80 },
      candidate: { joules_per_correct: 10, latency_p95_ms: 150, accuracy_pct: 70 },
      joules_per_correct_pct: -50,
      latency_p95_pct: 50,
      accuracy_pp_delta: -10,
      energy_sources_match: null,
    });
    // Reports with no per-case results: the paired fields are there, null, with the reason.
    assert.equal(paired.accuracy_pp_delta_ci95, null);
    assert.equal(paired.accuracy_p_value, null);
    assert.equal(paired.significant.joules_per_correct_pct, null);
    assert.match(paired.paired_reason, /./);
    assert.match(r.stderr, /lower is better/);
  });

  it('writes null deltas for zero and null baselines, and --out writes the file', async () => {
    const out = join(dir, 'cmp.json');
    const r = await cli(['compare', '-b', write('z.json', report(0, 0, null)), '-c', write('y.json', report(5, 5, 50)), '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(c.joules_per_correct_pct, null);
    assert.equal(c.latency_p95_pct, null);
    assert.equal(c.accuracy_pp_delta, null);
  });

  it('compares two real runs', async () => {
    const a = join(dir, 'ra.json');
    const b = join(dir, 'rb.json');
    assert.equal((await cli(['run', '-s', 'router', '-o', a, '-q'])).code, 0);
    assert.equal((await cli(['run', '-s', 'router', '-o', b, '-q', '--warmup', '0'])).code, 0);
    const r = await cli(['compare', '-b', a, '-c', b]);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.ok(c.joules_per_correct_pct > 0, 'a cold cache costs more per correct answer');
    assert.equal(c.accuracy_pp_delta, 0);
  });

  it('rejects a file that is not a report with one clear line, exit 2', async () => {
    const good = write('g.json', report(1, 1, 1));
    for (const [bad, pattern] of [
      [write('n.json', '{"hello": 1}'), /n\.json: not a joulebench report \(case_count: is missing\)/],
      [write('t.json', 'not json'), /t\.json: not a joulebench report \(not valid JSON/],
      [join(dir, 'missing.json'), /missing\.json: no such file/],
      [write('w.json', { ...report(1, 1, 1), accuracy_pct: 'high' }), /accuracy_pct: /],
    ] as const) {
      const r = await cli(['compare', '-b', good, '-c', bad]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, pattern);
    }
  });
});
