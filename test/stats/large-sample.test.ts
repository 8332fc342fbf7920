import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_BOOTSTRAP_MAX_UNITS } from '../../src/stats/bootstrap.js';
import { isInterval, type Interval, type IntervalResult } from '../../src/stats/interval.js';
import { quantileLinearisation, ratioDeltaInterval, woodruffInterval } from '../../src/stats/large-sample.js';
import { twoSidedZ } from '../../src/stats/normal.js';
import { pairedComparison, type PairedCase } from '../../src/stats/paired.js';
import { reportCi, type CaseColumns, type ReportCiOptions } from '../../src/stats/report-ci.js';
import { seededRng, type Rng } from '../../src/stats/rng.js';

const uniform = (rng: Rng) => (rng.nextU32() + 0.5) / 4294967296;
const exponential = (rng: Rng) => -Math.log(uniform(rng));

/**
 * n cases × `passes` scored passes. Joules 1 + Exp(1) (mean 2) a pass, correct with probability 0.6,
 * weight 1, dollars 0.001 × joules; latency floor(1000 · Exp(1)) ms, drawn once per case and shared by
 * its passes plus `noise_ms` × Exp(1) a pass (strongly correlated passes when noise is small).
 */
function synthetic(rng: Rng, n: number, passes = 1, noise_ms = 0): CaseColumns {
  const m = n * passes;
  const cols = {
    unit: new Float64Array(m),
    pass: new Float64Array(m),
    passed: new Float64Array(m),
    weight: new Float64Array(m).fill(1),
    joules: new Float64Array(m),
    usd: new Float64Array(m),
    latency_ms: new Float64Array(m),
  };
  let j = 0;
  for (let pass = 0; pass < passes; pass++) {
    // Passes in run order: the whole suite once, then again.
    for (let i = 0; i < n; i++, j++) {
      cols.unit[j] = i;
      cols.pass[j] = pass;
    }
  }
  const base = Float64Array.from({ length: n }, () => 1000 * exponential(rng));
  for (let k = 0; k < m; k++) {
    cols.passed[k] = uniform(rng) < 0.6 ? 1 : 0;
    cols.joules[k] = 1 + exponential(rng);
    cols.usd[k] = 0.001 * cols.joules[k]!;
    cols.latency_ms[k] = Math.floor(base[cols.unit[k]!]! + noise_ms * exponential(rng));
  }
  return cols;
}

const OPTS: ReportCiOptions = { seed: 'sha256:large-sample-test', resamples: 2000, joulesUnknown: null, usdUnknown: null };
const FIGURES = ['joules_per_correct', 'usd_per_correct', 'latency_p50_ms', 'latency_p95_ms', 'latency_p99_ms'] as const;
const ok = (r: IntervalResult | Interval | null | undefined): Interval => {
  assert.ok(r && isInterval(r), JSON.stringify(r));
  return r;
};

describe('large-sample intervals', () => {
  it('delta method: R̂ ± z·√(n/(n−1) · Σ(y − R̂x)² / (Σx)²), worked by hand', () => {
    const y = [3, 5, 2, 7];
    const x = [1, 2, 0, 3];
    const r = 17 / 6;
    const ss = y.reduce((s, yi, i) => s + (yi - r * x[i]!) ** 2, 0);
    const se = Math.sqrt((ss / 36) * (4 / 3));
    const i = ok(ratioDeltaInterval(y, x, 0.95));
    assert.equal(i.method, 'delta');
    assert.ok(Math.abs(i.low - (r - 1.959964 * se)) < 1e-5 && Math.abs(i.high - (r + 1.959964 * se)) < 1e-5, JSON.stringify(i));
    assert.match(JSON.stringify(ratioDeltaInterval([1, 1], [0, 0], 0.95)), /nothing correct/);
    // Non-negative data whose normal interval would reach below 0: a reason, not a misleading interval.
    const sparse = ratioDeltaInterval([1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 0.95);
    assert.ok(!isInterval(sparse) && /below 0: too few units with a correct answer \(1\)/.test(sparse.reason), JSON.stringify(sparse));
  });

  it("Woodruff: one observation a unit gives the binomial variance F̂(1 − F̂)/M (× n/(n−1)); ends are F̂⁻¹(p ± z·SE)", () => {
    const sorted = Float64Array.from({ length: 200 }, (_, i) => i + 1);
    const units = Uint32Array.from({ length: 200 }, (_, i) => (i * 7) % 200);
    const lin = quantileLinearisation(sorted, units, 200, 95);
    assert.equal(lin.q, 190);
    assert.equal(lin.share, 0.95);
    assert.ok(Math.abs(lin.varianceOfShare - ((0.95 * 0.05) / 200) * (200 / 199)) < 1e-15);
    const half = twoSidedZ(0.95) * Math.sqrt(lin.varianceOfShare);
    const i = ok(woodruffInterval(lin, sorted, 95, 0.95));
    assert.deepEqual([i.low, i.high, i.method], [Math.ceil((0.95 - half) * 200), Math.ceil((0.95 + half) * 200), 'woodruff']);
    // Ties: F̂(q̂) counts every observation equal to q̂.
    const tied = quantileLinearisation([1, 2, 2, 2, 3], [0, 1, 2, 3, 4], 5, 50);
    assert.deepEqual([tied.q, tied.share], [2, 0.8]);
  });

  it('reach ~95 % coverage on synthetic data (200 seeded replications of 5,000 cases, the limit lowered)', () => {
    const rng = seededRng('coverage');
    // The truth: J/correct = E[J] / P(correct) = 2 / 0.6; the p-quantile of floor(1000·Exp(1)) is floor(−1000·ln(1 − p)).
    const truth: Record<(typeof FIGURES)[number], number> = {
      joules_per_correct: 2 / 0.6,
      usd_per_correct: 0.002 / 0.6,
      latency_p50_ms: Math.floor(-1000 * Math.log(0.5)),
      latency_p95_ms: Math.floor(-1000 * Math.log(0.05)),
      latency_p99_ms: Math.floor(-1000 * Math.log(0.01)),
    };
    const covered = Object.fromEntries(FIGURES.map((f) => [f, 0])) as Record<(typeof FIGURES)[number], number>;
    const reps = 200;
    for (let r = 0; r < reps; r++) {
      const ci = reportCi(synthetic(rng, 5000), { ...OPTS, maxUnits: 1000 });
      assert.equal(ci.analytic?.units, 5000);
      for (const f of FIGURES) {
        const i = ok(ci[f]);
        assert.equal(i.method, f.startsWith('latency') ? 'woodruff' : 'delta');
        if (i.low <= truth[f] && truth[f] <= i.high) covered[f]++;
      }
    }
    for (const f of FIGURES) {
      const share = covered[f] / reps;
      // 2,000 replications of this design gave 93.9–95.3 %; 200 replications vary by ±1.6 % (one sd).
      assert.ok(share >= 0.88 && share <= 0.995, `${f}: ${covered[f]} of ${reps} intervals covered the truth`);
    }
  });

  it('agree with the bootstrap just above the default limit (both ends within 15 % of the width)', () => {
    const n = DEFAULT_BOOTSTRAP_MAX_UNITS + 1000;
    const cols = synthetic(seededRng('agree'), n);
    const analytic = reportCi(cols, OPTS);
    const boot = reportCi(cols, { ...OPTS, maxUnits: n });
    assert.equal(analytic.analytic?.units, n);
    assert.equal(boot.analytic, undefined);
    for (const f of FIGURES) {
      const a = ok(analytic[f]);
      const b = ok(boot[f]);
      assert.equal(b.method, 'bootstrap');
      const width = b.high - b.low;
      assert.ok(width > 0);
      for (const end of ['low', 'high'] as const) {
        assert.ok(Math.abs(a[end] - b[end]) <= 0.15 * width, `${f} ${end}: ${a[end]} (${a.method}) vs ${b[end]} (bootstrap), width ${width}`);
      }
    }
  });

  it('switch exactly at the limit: the bootstrap at units = limit (units are cases, not passes), large-sample above', () => {
    const cols = synthetic(seededRng('switch'), 60, 2, 5);
    const at = reportCi(cols, { ...OPTS, maxUnits: 60 });
    const above = reportCi(cols, { ...OPTS, maxUnits: 59 });
    assert.equal(at.analytic, undefined);
    assert.deepEqual(FIGURES.map((f) => ok(at[f]).method), FIGURES.map(() => 'bootstrap'));
    assert.deepEqual(FIGURES.map((f) => ok(above[f]).method), ['delta', 'delta', 'woodruff', 'woodruff', 'woodruff']);
    assert.deepEqual({ ...above.analytic, reason: undefined }, { units: 60, bootstrap_max_units: 59, reason: undefined });
    assert.match(above.analytic!.reason, /^60 cases are more than the bootstrap's limit of 59 \(--bootstrap-max-units\): no resamples were drawn/);
    // The requested resamples stay on record; Wilson is untouched; no bootstrap at all with --bootstrap 0.
    assert.equal(above.resamples, 2000);
    assert.deepEqual(above.accuracy_pct, at.accuracy_pct);
    const off = reportCi(cols, { ...OPTS, resamples: 0, maxUnits: 0 });
    assert.equal(off.analytic, undefined);
    assert.equal(off.latency_p95_ms, null);
    // Infinity: the bootstrap at any size; the default below the limit is the bootstrap, byte for byte.
    assert.deepEqual(reportCi(cols, { ...OPTS, maxUnits: Infinity }), at);
    assert.deepEqual(reportCi(cols, OPTS), at);
  });

  it('one pass in case order (no unit numbering, 32-bit sorted latencies) gives what the general path gives', () => {
    const cols = synthetic(seededRng('paths'), 3000);
    (cols.latency_ms as Float64Array)[7] = NaN;
    const fast = reportCi(cols, { ...OPTS, maxUnits: 100 });
    // Units numbered otherwise (case 0 last): the general path, with per-unit sums and unit arrays.
    const general = reportCi({ ...cols, unit: Float64Array.from(cols.unit, (u) => (u === 0 ? 5000 : u)) }, { ...OPTS, maxUnits: 100 });
    assert.deepEqual(fast, general);
    // Fractional latencies (a hand-made column): the 64-bit sort, the same answer as the general path.
    const frac = { ...cols, latency_ms: Float64Array.from(cols.latency_ms, (v) => v + 0.5) };
    assert.deepEqual(reportCi(frac, { ...OPTS, maxUnits: 100 }), reportCi({ ...frac, unit: Float64Array.from(cols.unit, (u) => (u === 0 ? 5000 : u)) }, { ...OPTS, maxUnits: 100 }));
  });

  it('repeats (clustered units) widen the latency interval against passes counted as independent', () => {
    const clustered = synthetic(seededRng('cluster'), 5000, 4, 20);
    const independent = { ...clustered, unit: Float64Array.from({ length: clustered.unit.length }, (_, j) => j) };
    const a = reportCi(clustered, { ...OPTS, maxUnits: 0 });
    const b = reportCi(independent, { ...OPTS, maxUnits: 0 });
    for (const f of ['latency_p50_ms', 'latency_p95_ms'] as const) {
      const wa = ok(a[f]).high - ok(a[f]).low;
      const wb = ok(b[f]).high - ok(b[f]).low;
      // Four nearly equal passes a case carry about one case's information: √4 = 2× the width.
      assert.ok(wa > 1.5 * wb, `${f}: clustered width ${wa}, independent ${wb}`);
    }
  });

  it('a 1M-case reportCi costs far less than the bootstrap did (measured against a 10k-case bootstrap in the same process)', () => {
    const cpu = (f: () => void): number => {
      const t = process.cpuUsage();
      f();
      const d = process.cpuUsage(t);
      return (d.user + d.system) / 1000;
    };
    const small = synthetic(seededRng('small'), 10_000);
    const big = synthetic(seededRng('big'), 1_000_000);
    const boot10k = cpu(() => reportCi(small, OPTS));
    let ci: ReturnType<typeof reportCi> | null = null;
    const new1m = cpu(() => (ci = reportCi(big, OPTS)));
    assert.equal(ci!.analytic?.units, 1_000_000);
    // The bootstrap grows as cases × resamples: at 1M it would cost ~100 × the 10k figure. Ask for 10× under that.
    assert.ok(new1m < 10 * boot10k, `1M cases large-sample ${new1m.toFixed(0)} ms CPU; 10k cases bootstrap ${boot10k.toFixed(0)} ms`);
  });
});

describe('paired comparison above the limit', () => {
  /**
   * n cases of two runs sharing each case's difficulty h ~ Exp(1): accuracy 70 % and 72 % (the same draw,
   * so +2 points exactly), joules 1 + h + 0.3·Exp and 0.9·(1 + h) + 0.3·Exp, latency
   * floor(200 + 1000·h + 50·Exp) and floor(190 + 950·h + 50·Exp) ms.
   */
  function pairedRuns(n: number, rng: Rng = seededRng('paired-large')): [PairedCase[], PairedCase[]] {
    const base: PairedCase[] = [];
    const cand: PairedCase[] = [];
    for (let i = 0; i < n; i++) {
      const hard = exponential(rng);
      const easy = uniform(rng);
      base.push({ key: `0:${i}`, unit: i, passed: easy < 0.7, weight: 1, joules: 1 + hard + 0.3 * exponential(rng), usd: null, latency_ms: Math.floor(200 + 1000 * hard + 50 * exponential(rng)) });
      cand.push({ key: `0:${i}`, unit: i, passed: easy < 0.72, weight: 1, joules: 0.9 * (1 + hard) + 0.3 * exponential(rng), usd: null, latency_ms: Math.floor(190 + 950 * hard + 50 * exponential(rng)) });
    }
    return [base, cand];
  }

  it('reach ~95 % coverage (100 seeded replications of 3,000 paired cases, the limit lowered)', () => {
    // a·Exp + b·Exp (means a ≠ b) has survival (a·e^(−s/a) − b·e^(−s/b)) / (a − b): its 95th percentile by bisection.
    const p95 = (a: number, b: number): number => {
      let lo = 0;
      let hi = 1e6;
      for (let i = 0; i < 200; i++) {
        const m = (lo + hi) / 2;
        if ((a * Math.exp(-m / a) - b * Math.exp(-m / b)) / (a - b) > 0.05) lo = m;
        else hi = m;
      }
      return lo;
    };
    const truth = {
      accuracy_pp_delta: 2,
      joules_per_correct_ratio: (2.1 / 0.72) / (2.3 / 0.7),
      latency_p95_ms_delta: Math.floor(190 + p95(950, 50)) - Math.floor(200 + p95(1000, 50)),
    };
    const rng = seededRng('paired-coverage');
    const covered = { accuracy_pp_delta: 0, joules_per_correct_ratio: 0, latency_p95_ms_delta: 0 };
    const reps = 100;
    for (let r = 0; r < reps; r++) {
      const [b, c] = pairedRuns(3000, rng);
      const p = pairedComparison(b, c, { seed: 'sha256:p', maxUnits: 1000 });
      for (const f of Object.keys(covered) as (keyof typeof covered)[]) {
        const i = ok(p[f].ci95);
        if (i.low <= truth[f] && truth[f] <= i.high) covered[f]++;
      }
    }
    for (const [f, k] of Object.entries(covered)) assert.ok(k >= 88 && k <= 99, `${f}: ${k} of ${reps} intervals covered the truth`);
  });

  it('paired delta / Woodruff intervals agree with the paired bootstrap, and say why they were used', () => {
    const [b, c] = pairedRuns(DEFAULT_BOOTSTRAP_MAX_UNITS + 1000);
    const large = pairedComparison(b, c, { seed: 'sha256:p' });
    const boot = pairedComparison(b, c, { seed: 'sha256:p', maxUnits: Infinity });
    assert.equal(boot.analytic, undefined);
    assert.equal(large.analytic?.units, DEFAULT_BOOTSTRAP_MAX_UNITS + 1000);
    assert.match(large.analytic!.reason, /no resamples were drawn/);
    for (const [f, method] of [
      ['accuracy_pp_delta', 'paired-delta'],
      ['joules_per_correct_ratio', 'paired-delta'],
      ['latency_p95_ms_delta', 'paired-woodruff'],
    ] as const) {
      const a = ok(large[f].ci95);
      const z = ok(boot[f].ci95);
      assert.equal(a.method, method);
      assert.equal(z.method, 'paired-bootstrap');
      const width = z.high - z.low;
      // A quantile's bootstrap distribution is lumpy (whole-ms order statistics): more room for the p95 difference.
      const tol = f === 'latency_p95_ms_delta' ? 0.35 : 0.15;
      for (const end of ['low', 'high'] as const) assert.ok(Math.abs(a[end] - z[end]) <= tol * width, `${f} ${end}: ${a[end]} vs ${z[end]} (width ${width})`);
      assert.equal(large[f].significant, boot[f].significant, f);
    }
    // McNemar is exact at any size: the same.
    assert.deepEqual(large.accuracy_pp_delta.mcnemar, boot.accuracy_pp_delta.mcnemar);
  });
});
