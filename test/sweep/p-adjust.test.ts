import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import type { BenchReport } from '../../src/core/aggregate.js';
import type { CaseResult } from '../../src/core/types.js';
import { sweepComparison, type SweepArmRun } from '../../src/sweep/comparison.js';
import { renderSweepTable } from '../../src/report/sweep-table.js';

const N = 60;
const DIGEST = 'sha256:' + 'b'.repeat(64);

/** An arm whose case i is correct when `correct(i)`; every case spends 1 J and 100 ms. */
function arm(name: string, correct: (i: number) => boolean): SweepArmRun {
  const results = Array.from({ length: N }, (_, i) => ({
    record: 'case', phase: 'scored', pass: 0, index: i, passed: correct(i), weight: 1, joules: 1, cost_usd: 0, latency_ms: 100, error: null,
  })) as unknown as CaseResult[];
  const k = results.filter((r) => r.passed).length;
  const report = {
    accuracy_pct: (k * 100) / N,
    joules_per_correct: N / k,
    usd_per_correct: 0,
    latency_p95_ms: 100,
    energy_source: 'rapl',
    energy_attribution: 'exclusive',
    below_floor_count: 0,
    suite: { digest: DIGEST },
  } as unknown as BenchReport;
  return { arm: name, suite: 's', report, results };
}

// Baseline right on cases 0–29. Discordant pairs (baseline only, candidate only): x (0, 12), y (2, 10), z (3, 3).
const runs = [
  arm('base', (i) => i < 30),
  arm('x', (i) => i < 42),
  arm('y', (i) => i >= 2 && i < 40),
  arm('z', (i) => i >= 3 && i < 33),
];
const sweep = { id: 'sw', name: 'sw', suites: ['s'], arms: ['base', 'x', 'y', 'z'], baseline: 'base' };

describe('sweep comparison: multiple comparisons against the baseline', () => {
  it("holm (the default): McNemar's p-values adjusted by the step-down worked by hand, verdicts read the adjusted p", () => {
    const c = sweepComparison(sweep, runs, { resamples: 200 });
    assert.equal(c.p_adjust, 'holm');
    const vs = Object.fromEntries(c.suites[0]!.vs_baseline.map((v) => [v.arm, v]));
    // Raw exact p: x 2·(1/4096); y 2·(1 + 12 + 66)/4096; z 1.
    const px = 2 / 4096;
    const py = (2 * 79) / 4096;
    assert.ok(Math.abs(vs.x!.accuracy_p_value! - px) < 1e-12);
    assert.ok(Math.abs(vs.y!.accuracy_p_value! - py) < 1e-12);
    assert.equal(vs.z!.accuracy_p_value, 1);
    // Step-down over m = 3: x × 3, y × 2, z × 1 (kept ≥ the one before).
    assert.ok(Math.abs(vs.x!.accuracy_p_adjusted! - 3 * px) < 1e-12);
    assert.ok(Math.abs(vs.y!.accuracy_p_adjusted! - 2 * py) < 1e-12);
    assert.equal(vs.z!.accuracy_p_adjusted, 1);
    assert.equal(vs.x!.accuracy_verdict, 'better');
    // y is significant alone (p ≈ 0.039) but not among three comparisons (0.077).
    assert.equal(vs.y!.accuracy_verdict, 'no detectable change');
    const table = renderSweepTable(c);
    assert.match(table, /Holm-adjusted/);
    assert.match(table, /McNemar p \(Holm\)/);
    assert.match(table, /3 comparisons: .*98\.3333 % intervals \(α\/3, Bonferroni\)/);
  });

  it('none: each comparison at α, as the table says', () => {
    const c = sweepComparison(sweep, runs, { resamples: 200, pAdjust: 'none' });
    const y = c.suites[0]!.vs_baseline.find((v) => v.arm === 'y')!;
    assert.equal(y.accuracy_p_adjusted, y.accuracy_p_value);
    assert.equal(y.accuracy_verdict, 'better');
    assert.match(renderSweepTable(c), /no multiple-comparison correction/);
  });
});

describe('sweep --p-adjust (spawned)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-padjust-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const suite = join(dir, 'two.json');
  writeFileSync(suite, JSON.stringify({ name: 'two', cases: [{ id: 'a', prompt: 'x', expected: 'x' }, { id: 'b', prompt: 'y', expected: 'y' }, { id: 'c', prompt: 'z', expected: 'q' }] }));
  const plan = join(dir, 'plan.yaml');
  writeFileSync(plan, `name: p\nsuites: [${JSON.stringify(suite)}]\nbaseline: a\narms:\n  - name: a\n    kind: echo\n  - name: b\n    kind: echo\n  - name: c\n    kind: echo\n`);
  it('none is recorded in the sweep folder, stated in the table, and report DIR recomputes with it; holm is the default', async () => {
    const out = join(dir, 'none');
    const r = await cli(['sweep', plan, '--out-dir', out, '--no-history', '--no-idle', '--p-adjust', 'none']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).p_adjust, 'none');
    assert.match(r.stderr, /no multiple-comparison correction/);
    assert.equal(JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')).comparison.p_adjust, 'none');
    const again = await cli(['report', out]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /no multiple-comparison correction/);
    const dflt = await cli(['sweep', plan, '--out-dir', join(dir, 'holm'), '--no-history', '--no-idle']);
    assert.equal(dflt.code, 0, dflt.stderr);
    assert.equal(JSON.parse(dflt.stdout).p_adjust, 'holm');
    assert.match(dflt.stderr, /McNemar p \(Holm\)/);
    const bad = await cli(['sweep', plan, '--out-dir', join(dir, 'bad'), '--p-adjust', 'bonferroni']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--p-adjust/);
  });
});
