import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { wilson } from '../../src/stats/index.js';
import { repeatSpread } from '../../src/stats/repeat-spread.js';
import type { CaseColumns } from '../../src/stats/report-ci.js';
import { CTX, result } from '../helpers/results.js';

const many = (n: number, f: (i: number) => Partial<Parameters<typeof result>[0]>) => Array.from({ length: n }, (_, i) => result({ index: i, case_id: `c${i}`, ...f(i) }));

describe('report ci', () => {
  it('every report has intervals: Wilson for accuracy, bootstrap for J/correct, $/correct and latency', () => {
    const rs = many(40, (i) => ({ passed: i % 4 !== 0, joules: 1 + (i % 5), cost_usd: 0.001 * (1 + (i % 3)), latency_ms: 10 + ((i * 17) % 50) }));
    const r = aggregate(rs, CTX);
    const w = wilson(30, 40);
    assert.ok('low' in w);
    assert.deepEqual(r.ci.accuracy_pct, { low: Math.round(w.low * 100 * 1e4) / 1e4, high: Math.round(w.high * 100 * 1e4) / 1e4, level: 0.95, method: 'wilson' });
    for (const f of ['joules_per_correct', 'usd_per_correct', 'latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms'] as const) {
      const ci = r.ci[f]!;
      assert.ok(ci, `${f}: ${r.ci.reasons[f]}`);
      assert.equal(ci.method, 'bootstrap');
      const point = r[f]!;
      assert.ok(ci.low <= point && point <= ci.high, `${f}: ${point} outside [${ci.low}, ${ci.high}]`);
    }
    assert.equal(r.ci.resamples, 2000);
    assert.equal(r.ci.unit, 'case');
    assert.deepEqual(r.ci.reasons, {});
    // Deterministic: seeded from the suite digest.
    assert.deepEqual(aggregate(rs, CTX).ci, r.ci);
    assert.notDeepEqual(aggregate(rs, { ...CTX, suite: { ...CTX.suite, digest: 'sha256:other' } }).ci.joules_per_correct, r.ci.joules_per_correct);
    // JSON: intervals are plain numbers, nothing infinite.
    assert.doesNotThrow(() => JSON.parse(JSON.stringify(r.ci)));
  });

  it('null with a reason: fewer than 2 scored cases, unknown energy, shared attribution, bootstrap off', () => {
    const one = aggregate([result()], CTX);
    assert.equal(one.ci.accuracy_pct, null);
    assert.equal(one.ci.reasons.accuracy_pct, 'fewer than 2 scored cases (1)');
    assert.equal(one.ci.joules_per_correct, null);
    assert.equal(one.ci.reasons.latency_p95_ms, 'fewer than 2 timed cases (1)');

    const unknown = aggregate(many(10, (i) => ({ joules: i === 3 ? null : 1 })), CTX);
    assert.equal(unknown.ci.joules_per_correct, null);
    assert.equal(unknown.ci.reasons.joules_per_correct, 'energy unknown for 1 cases');
    assert.equal(unknown.ci.reasons.usd_per_correct, 'no case reported a cost');

    const shared = aggregate(many(10, () => ({ energy_source: 'rapl' })), { ...CTX, concurrency: 4 });
    assert.match(shared.ci.reasons.joules_per_correct!, /per-case windows overlap/);

    const off = aggregate(many(10, () => ({})), { ...CTX, bootstrap: 0 });
    assert.equal(off.ci.resamples, 0);
    assert.ok(off.ci.accuracy_pct, 'Wilson needs no resampling');
    assert.equal(off.ci.reasons.joules_per_correct, 'bootstrap off (--bootstrap 0)');
  });

  it('unscored cases add energy but not accuracy; weighted cases carry their weight into the resamples', () => {
    // 10 cases, weight 2 on the correct ones: J/correct = 10 J / (5 × 2).
    const rs = many(10, (i) => ({ passed: i < 5 ? true : i < 8 ? false : null, expected: i < 8 ? 'x' : null, weight: 2, joules: 1 }));
    const r = aggregate(rs, CTX);
    assert.equal(r.joules_per_correct, 1);
    assert.ok(r.ci.joules_per_correct!.low <= 1 && r.ci.joules_per_correct!.high >= 1);
    const w = wilson(5, 8);
    assert.ok('low' in w);
    assert.equal(r.ci.accuracy_pct!.low, Math.round(w.low * 1e6) / 1e4);
  });

  it('repeats: passes of one case are resampled together (an interval no narrower for counting a case twice)', () => {
    const one = many(30, (i) => ({ joules: 1 + (i % 7), passed: i % 3 !== 0 }));
    const twice = [...one, ...one.map((r) => ({ ...r, pass: 1 }))];
    const a = aggregate(one, CTX).ci.joules_per_correct!;
    const b = aggregate(twice, { ...CTX, repeats: 2 }).ci.joules_per_correct!;
    // Same units, same seed, each unit's sums doubled: the ratio's resampled values are identical.
    assert.deepEqual(a, b);
  });
});

describe('repeat spread', () => {
  it('per-pass energy and latency: mean, sample sd, min–max over passes; null for one pass', () => {
    // Three passes of 4 cases; pass p costs (p + 1) J per case, latencies 10·(p+1)…
    const rs = [0, 1, 2].flatMap((p) => many(4, (i) => ({ pass: p, joules: p + 1, passed: i !== 0, latency_ms: 10 * (p + 1) + i })));
    const r = aggregate(rs, { ...CTX, repeats: 3 });
    const totals = [4, 8, 12];
    const sd = Math.sqrt(totals.reduce((a, t) => a + (t - 8) ** 2, 0) / 2);
    assert.deepEqual(r.repeat_spread!.total_joules, { n: 3, mean: 8, sd: Math.round(sd * 1e6) / 1e6, min: 4, max: 12 });
    // J/correct per pass: 4/3, 8/3, 12/3.
    assert.equal(r.repeat_spread!.joules_per_correct!.mean, Math.round((8 / 3) * 1e6) / 1e6);
    // p95 of 4 latencies per pass is the largest: 13, 23, 33.
    assert.deepEqual(r.repeat_spread!.latency_p95_ms, { n: 3, mean: 23, sd: 10, min: 13, max: 33 });
    assert.equal(r.repeat_spread!.passes, 3);
    assert.equal(aggregate(many(4, () => ({})), CTX).repeat_spread, null);
    const unknown = aggregate([0, 1].flatMap((p) => many(3, (i) => ({ pass: p, joules: i === 1 && p === 1 ? null : 1 }))), { ...CTX, repeats: 2 });
    assert.equal(unknown.repeat_spread!.total_joules, null);
    assert.equal(unknown.repeat_spread!.reasons.total_joules, 'energy unknown for some cases');
  });

  it('hundreds of passes, cases of a pass scattered (a load run cycling a small suite): each pass\'s figures as a walk over that pass alone gives them', () => {
    // Seeded values with order-sensitive sums (joules from 1e-3 to 1e9), unknown energies and failed cases.
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const n = 6000;
    const P = 300;
    const cols: CaseColumns = {
      unit: Float64Array.from({ length: n }, (_, i) => i % 20),
      pass: Float64Array.from({ length: n }, () => Math.floor(next() * P)),
      passed: Float64Array.from({ length: n }, () => [1, 0, -1][Math.floor(next() * 3)]!),
      weight: Float64Array.from({ length: n }, () => 1 + Math.floor(next() * 3)),
      joules: Float64Array.from({ length: n }, () => (next() < 0.002 ? NaN : 10 ** (next() * 12 - 3))),
      usd: new Float64Array(n).fill(NaN),
      latency_ms: Float64Array.from({ length: n }, () => (next() < 0.05 ? NaN : Math.floor(next() * 500))),
    };
    // The definition, walked pass by pass.
    const passes = [...new Set(cols.pass)].sort((a, b) => a - b);
    const ref = passes.map((p) => {
      let j = 0;
      let unknown = false;
      let wc = 0;
      const lat: number[] = [];
      for (let i = 0; i < n; i++) {
        if (cols.pass[i] !== p) continue;
        if (Number.isNaN(cols.joules[i]!)) unknown = true;
        else j += cols.joules[i]!;
        if (cols.passed[i] === 1) wc += cols.weight[i]!;
        if (!Number.isNaN(cols.latency_ms[i]!)) lat.push(cols.latency_ms[i]!);
      }
      lat.sort((a, b) => a - b);
      return { j: unknown ? null : j, jpc: unknown || wc === 0 ? null : j / wc, p95: lat[Math.ceil(0.95 * lat.length) - 1] ?? null };
    });
    const r = repeatSpread(cols, { no_pass_energy: null })!;
    assert.equal(r.passes, passes.length);
    const known = ref.filter((x) => x.j !== null);
    assert.ok(known.length < ref.length, 'precondition: some pass has an unknown energy');
    assert.equal(r.total_joules, null);
    // Without the unknown energies every pass has its total: the mean, sd and range of the reference's.
    const allKnown = repeatSpread({ ...cols, joules: Float64Array.from(cols.joules, (x) => (Number.isNaN(x) ? 1 : x)) }, { no_pass_energy: null })!;
    const totals = passes.map((p) => {
      let j = 0;
      for (let i = 0; i < n; i++) if (cols.pass[i] === p) j += Number.isNaN(cols.joules[i]!) ? 1 : cols.joules[i]!;
      return j;
    });
    const round6 = (v: number) => Math.round(v * 1e6) / 1e6;
    const mean = totals.reduce((a, b) => a + b, 0) / totals.length;
    assert.equal(allKnown.total_joules!.mean, round6(mean));
    assert.equal(allKnown.total_joules!.min, round6(Math.min(...totals)));
    assert.equal(allKnown.total_joules!.max, round6(Math.max(...totals)));
    const p95 = ref.map((x) => x.p95!);
    assert.deepEqual([r.latency_p95_ms!.min, r.latency_p95_ms!.max], [Math.min(...p95), Math.max(...p95)]);
    assert.equal(r.latency_p95_ms!.mean, Math.round((p95.reduce((a, b) => a + b, 0) / p95.length) * 1000) / 1000);
  });
});
