import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { reportCi, type CaseColumns } from '../../src/stats/index.js';
import { cli } from '../helpers/cli.js';

/** Columns for cases in clusters: `sizes[k]` cases in cluster k, `right[k]` of them correct. */
function columns(sizes: number[], right: number[]): CaseColumns {
  const c: { [K in keyof CaseColumns]: number[] } = { unit: [], pass: [], passed: [], weight: [], joules: [], usd: [], latency_ms: [] };
  sizes.forEach((n, k) => {
    for (let i = 0; i < n; i++) {
      c.unit.push(k);
      c.pass.push(0);
      c.passed.push(i < right[k]! ? 1 : 0);
      c.weight.push(1);
      c.joules.push(10 + k);
      c.usd.push(0);
      c.latency_ms.push(100 + k);
    }
  });
  return c;
}

describe('cluster bootstrap of accuracy', () => {
  const sizes = [4, 4, 4, 4, 4];
  const right = [4, 3, 0, 1, 4];
  it("matches the exact bootstrap distribution over clusters, enumerated (every one of 5^5 draws)", () => {
    // Exact: each ordered draw of 5 clusters with replacement is equally likely; accuracy = Σ right / Σ size.
    const values: number[] = [];
    for (let m = 0; m < 5 ** 5; m++) {
      let r = 0;
      let n = 0;
      for (let d = 0, x = m; d < 5; d++, x = Math.floor(x / 5)) {
        r += right[x % 5]!;
        n += sizes[x % 5]!;
      }
      values.push((100 * r) / n);
    }
    values.sort((a, b) => a - b);
    const q = (p: number) => values[Math.ceil(p * values.length) - 1]!;
    const ci = reportCi(columns(sizes, right), { seed: 'sha256:x', resamples: 20000, cluster: 'subject', joulesUnknown: null, usdUnknown: null });
    assert.equal(ci.unit, 'subject');
    assert.equal(ci.clusters, 5);
    const acc = ci.accuracy_pct!;
    assert.equal(acc.method, 'bootstrap');
    assert.ok(acc.low >= q(0.02) && acc.low <= q(0.03), `low ${acc.low} vs exact [${q(0.02)}, ${q(0.03)}]`);
    assert.ok(acc.high >= q(0.97) && acc.high <= q(0.98), `high ${acc.high} vs exact [${q(0.97)}, ${q(0.98)}]`);
  });
  it('is wider than Wilson when cases within a cluster move together, and needs 2 clusters', () => {
    const wilson = reportCi(columns(sizes, right), { seed: 'sha256:x', resamples: 2000, joulesUnknown: null, usdUnknown: null }).accuracy_pct!;
    const clustered = reportCi(columns(sizes, right), { seed: 'sha256:x', resamples: 2000, cluster: 'subject', joulesUnknown: null, usdUnknown: null }).accuracy_pct!;
    assert.equal(wilson.method, 'wilson');
    assert.ok(clustered.high - clustered.low > wilson.high - wilson.low, `${JSON.stringify(clustered)} vs ${JSON.stringify(wilson)}`);
    const one = reportCi(columns([6], [3]), { seed: 'sha256:x', resamples: 2000, cluster: 'subject', joulesUnknown: null, usdUnknown: null });
    assert.equal(one.accuracy_pct, null);
    assert.match(one.reasons.accuracy_pct!, /fewer than 2 clusters \(1\)/);
  });
});

describe('run --cluster subject (spawned)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-cluster-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  it('resamples subjects, says so, records it in the header, and report rebuilds the same intervals', async () => {
    // Three subjects of ten cases: the echo target answers the prompt, so "expected" decides who is right.
    const cases = ['algebra', 'biology', 'law'].flatMap((s, k) =>
      Array.from({ length: 10 }, (_, i) => ({ id: `${s}-${i}`, prompt: `q${k}-${i}`, expected: k === 1 || (k === 2 && i < 5) ? 'nope' : `q${k}-${i}`, dataset: s })),
    );
    const suite = join(dir, 'subjects.json');
    writeFileSync(suite, JSON.stringify({ name: 'subjects', cases }));
    const out = join(dir, 'r.json');
    const r = await cli(['run', '--no-history', '--suite', suite, '--target', 'echo', '--cluster', 'subject', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(report.ci.unit, 'subject');
    assert.equal(report.ci.clusters, 3);
    assert.equal(report.ci.accuracy_pct.method, 'bootstrap');
    assert.match(r.stderr + r.stdout, /over 3 subjects \(clustered\)/);
    const header = JSON.parse(readFileSync(join(dir, 'r.results.jsonl'), 'utf8').split('\n')[0]!);
    assert.equal(header.cluster, 'subject');
    const rebuilt = await cli(['report', join(dir, 'r.results.jsonl'), '--json']);
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.deepEqual(JSON.parse(rebuilt.stdout).ci, report.ci);
    const bad = await cli(['run', '--no-history', '--suite', suite, '--target', 'echo', '--cluster', 'planet', '-o', join(dir, 'x.json')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--cluster/);
  });
});
