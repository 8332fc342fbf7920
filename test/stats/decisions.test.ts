import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  holmAdjust,
  mcnemar,
  mcnemarSampleSize,
  pairedMeanSampleSize,
  passAtK,
  passAtKCurve,
  passHatK,
  powerPlan,
  resolutionUnderBudget,
  type TaskRollouts,
} from '../../src/index.js';

const close = (a: number, b: number, tol: number, what = '') => assert.ok(Math.abs(a - b) <= tol, `${what} ${a} vs ${b} (tol ${tol})`);

/** Every k-subset of 0…n−1. */
function subsets(n: number, k: number): number[][] {
  const out: number[][] = [];
  const rec = (start: number, acc: number[]) => {
    if (acc.length === k) return void out.push([...acc]);
    for (let i = start; i < n; i++) rec(i + 1, [...acc, i]);
  };
  rec(0, []);
  return out;
}

describe('pass@k and pass^k', () => {
  it('equal the share of k-subsets with any / all correct, by brute-force enumeration', () => {
    for (let n = 1; n <= 8; n++) {
      for (let c = 0; c <= n; c++) {
        // The first c rollouts are the correct ones; which ones does not matter.
        for (let k = 1; k <= n; k++) {
          const all = subsets(n, k);
          const any = all.filter((s) => s.some((i) => i < c)).length / all.length;
          const every = all.filter((s) => s.every((i) => i < c)).length / all.length;
          close(passAtK(n, c, k), any, 1e-12, `pass@${k} n=${n} c=${c}`);
          close(passHatK(n, c, k), every, 1e-12, `pass^${k} n=${n} c=${c}`);
        }
      }
    }
  });
  it('stays exact where the binomial coefficients overflow a double', () => {
    // C(2000, 1000) ≈ 2e600: the ratio in big integers, then as a double.
    const C = (n: bigint, k: bigint): bigint => {
      let r = 1n;
      for (let i = 0n; i < k; i++) r = (r * (n - i)) / (i + 1n);
      return r;
    };
    const n = 2000;
    const c = 3;
    const k = 1000;
    const num = C(BigInt(n - c), BigInt(k));
    const den = C(BigInt(n), BigInt(k));
    const scale = 10n ** 18n;
    const exact = 1 - Number((num * scale) / den) / 1e18;
    close(passAtK(n, c, k), exact, 1e-12);
    assert.ok(Number.isFinite(passHatK(n, 1500, 1000)));
  });
  it('refuses impossible counts', () => {
    assert.throws(() => passAtK(3, 4, 1), RangeError);
    assert.throws(() => passAtK(3, 1, 4), RangeError);
    assert.throws(() => passHatK(3, 1, 0), RangeError);
  });
});

describe('passAtKCurve', () => {
  const tasks: TaskRollouts[] = [
    { resolved: [true, false, false, true], joules: [10, 20, 30, 40], usd: [0.1, 0.2, 0.3, 0.4] },
    { resolved: [false, false, false, false], joules: [5, 5, 5, 5], usd: [0.01, 0.01, 0.01, 0.01] },
    { resolved: [true, true, true, false], joules: [1, 2, 3, 4], usd: [0, 0, 0, 0] },
  ];
  it('matches enumeration of every k-subset: pass rates, expected energy and J per expected resolved', () => {
    const curve = passAtKCurve(tasks);
    assert.equal(curve.length, 4);
    for (const pt of curve) {
      let anySum = 0;
      let allSum = 0;
      let eJ = 0;
      let eUsd = 0;
      for (const t of tasks) {
        const ss = subsets(4, pt.k);
        anySum += ss.filter((s) => s.some((i) => t.resolved[i])).length / ss.length;
        allSum += ss.filter((s) => s.every((i) => t.resolved[i])).length / ss.length;
        eJ += ss.reduce((a, s) => a + s.reduce((b, i) => b + t.joules[i]!, 0), 0) / ss.length;
        eUsd += ss.reduce((a, s) => a + s.reduce((b, i) => b + t.usd[i]!, 0), 0) / ss.length;
      }
      close(pt.pass_at_k_pct, (anySum * 100) / 3, 1e-5, `pass@${pt.k}`);
      close(pt.pass_hat_k_pct, (allSum * 100) / 3, 1e-5, `pass^${pt.k}`);
      close(pt.expected_joules!, eJ, 1e-6);
      close(pt.joules_per_resolved!, eJ / anySum, 1e-6);
      if (allSum > 0) close(pt.joules_per_resolved_all_k!, eJ / allSum, 1e-6);
      else assert.equal(pt.joules_per_resolved_all_k, null);
      close(pt.usd_per_resolved!, eUsd / anySum, 1e-6);
    }
    // At k = n, pass@k is best-of-n and J per resolved is all the energy ÷ tasks resolved at least once.
    const last = curve[3]!;
    close(last.pass_at_k_pct, 200 / 3, 1e-5);
    close(last.joules_per_resolved!, (100 + 20 + 10) / 2, 1e-9);
    assert.equal(last.pass_hat_k_pct, 0);
    assert.equal(last.joules_per_resolved_all_k, null);
  });
  it('is null, not 0, where an energy is unknown, and stops at the fewest rollouts of any task', () => {
    const curve = passAtKCurve([tasks[0]!, { resolved: [true, false], joules: [null, 1], usd: [0, 0] }]);
    assert.equal(curve.length, 2);
    assert.equal(curve[0]!.expected_joules, null);
    assert.equal(curve[0]!.joules_per_resolved, null);
    assert.notEqual(curve[0]!.usd_per_resolved, null);
  });
});

describe('resolutionUnderBudget', () => {
  it('equals a fine Riemann sum of the resolve rate under a per-attempt budget, divided by the budget', () => {
    const tasks: TaskRollouts[] = [
      { resolved: [true, false], joules: [30, 10], usd: [0, 0] },
      { resolved: [true, true], joules: [90, 150], usd: [0, 0] },
      { resolved: [false, false], joules: [1, 1], usd: [0, 0] },
    ];
    const B = 120;
    const steps = 120_000;
    let area = 0;
    for (let s = 0; s < steps; s++) {
      const b = ((s + 0.5) * B) / steps;
      const rate = tasks.reduce((a, t) => a + t.resolved.filter((r, i) => r && t.joules[i]! <= b).length / t.resolved.length, 0) / tasks.length;
      area += rate * (B / steps);
    }
    close(resolutionUnderBudget(tasks, B)!, (area / B) * 100, 1e-3);
    assert.equal(resolutionUnderBudget([{ resolved: [true], joules: [null], usd: [null] }], B), null);
    assert.throws(() => resolutionUnderBudget(tasks, 0), RangeError);
  });
});

describe('holmAdjust', () => {
  it('is the step-down worked by hand', () => {
    // Sorted: 0.005 ×4 = 0.02; 0.01 ×3 = 0.03; 0.03 ×2 = 0.06; 0.04 ×1 = 0.04 → max so far 0.06.
    const adj = holmAdjust([0.01, 0.04, null, 0.03, 0.005]);
    assert.equal(adj[2], null);
    close(adj[0]!, 0.03, 1e-15);
    close(adj[1]!, 0.06, 1e-15);
    close(adj[3]!, 0.06, 1e-15);
    close(adj[4]!, 0.02, 1e-15);
    // 0.5 × 2 = 1, then 0.9 × 1 = 0.9 is raised to the running maximum 1.
    assert.deepEqual(holmAdjust([0.5, 0.9]), [1, 1]);
    assert.deepEqual(holmAdjust([]), []);
    assert.throws(() => holmAdjust([1.5]), RangeError);
  });
});

describe('sample sizes', () => {
  it('paired t: Cohen/G*Power tables (dz = 0.5 → 34 pairs, dz = 0.25 → 128) at α = 0.05, power 0.8', () => {
    // Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed., Table 2.4.1 (with
    // the paired design's dz); the same values from G*Power 3's "Means: difference between two dependent means".
    assert.equal(pairedMeanSampleSize({ sdDiff: 2, delta: 1, alpha: 0.05, power: 0.8 }), 34);
    assert.equal(pairedMeanSampleSize({ sdDiff: 4, delta: 1, alpha: 0.05, power: 0.8 }), 128);
  });
  it("McNemar: Connor's formula worked by hand, and the exact test's power at that n is the target's", () => {
    const za = 1.959963984540054;
    const zb = 0.8416212335729143;
    const psi = 0.3;
    const d = 0.1;
    const byHand = Math.ceil((za * Math.sqrt(psi) + zb * Math.sqrt(psi - d * d)) ** 2 / (d * d));
    const n = mcnemarSampleSize({ discordance: psi, delta: d, alpha: 0.05, power: 0.8 });
    assert.equal(n, byHand);
    assert.equal(n, 234);
    // Exact power of the exact McNemar test at n pairs: D ~ Binomial(n, ψ) discordant, b | D ~ Binomial(D, p10/ψ).
    const p10 = (psi - d) / 2;
    const logC = (a: number, b: number) => lgammaInt(a) - lgammaInt(b) - lgammaInt(a - b);
    let power = 0;
    for (let D = 0; D <= n; D++) {
      const pD = Math.exp(logC(n, D) + D * Math.log(psi) + (n - D) * Math.log(1 - psi));
      if (pD < 1e-15) continue;
      const q = p10 / psi;
      for (let b = 0; b <= D; b++) {
        if (mcnemar(b, D - b).p_value < 0.05) power += pD * Math.exp(logC(D, b) + b * Math.log(q) + (D - b) * Math.log(1 - q));
      }
    }
    assert.ok(power > 0.77 && power < 0.84, `exact power ${power}`);
  });
  it('refuses a discordance smaller than the difference', () => {
    assert.throws(() => mcnemarSampleSize({ discordance: 0.05, delta: 0.1, alpha: 0.05, power: 0.8 }), RangeError);
  });
  it('plans from one pilot under independence, and from two with the observed discordance and SD', () => {
    const base = Array.from({ length: 10 }, (_, i) => ({ key: String(i), correct: i < 6 ? 1 : 0, joules: 10 + i, latency_ms: 1000 }));
    const one = powerPlan(base, null, { accuracyPp: [10], joulesPct: [10] });
    const psi = 0.6 * 0.3 + 0.7 * 0.4;
    assert.equal(one.rows[0]!.cases, mcnemarSampleSize({ discordance: psi, delta: 0.1, alpha: 0.05, power: 0.8 }));
    const sd = Math.sqrt(base.reduce((a, c) => a + (c.joules - 14.5) ** 2, 0) / 9);
    assert.equal(one.rows[1]!.cases, pairedMeanSampleSize({ sdDiff: sd * Math.SQRT2, delta: 1.45, alpha: 0.05, power: 0.8 }));
    assert.equal(one.cases_needed, Math.max(one.rows[0]!.cases!, one.rows[1]!.cases!));
    assert.equal(one.seconds_per_system, one.cases_needed!);
    const cand = base.map((c, i) => ({ ...c, correct: i < 8 ? 1 : 0, joules: c.joules - 1 + (i % 2) }));
    const two = powerPlan(base, cand, { accuracyPp: [10], joulesPct: [5] });
    assert.equal(two.rows[0]!.cases, mcnemarSampleSize({ discordance: 0.2, delta: 0.1, alpha: 0.05, power: 0.8 }));
    assert.equal(two.paired_pilot, true);
    const dsd = Math.sqrt((10 * 0.25) / 9);
    assert.equal(two.rows[1]!.cases, pairedMeanSampleSize({ sdDiff: dsd, delta: 0.725, alpha: 0.05, power: 0.8 }));
    const unknown = powerPlan([{ key: 'a', correct: 1, joules: null, latency_ms: null }], null, { accuracyPp: [], joulesPct: [5] });
    assert.equal(unknown.rows[0]!.cases, null);
    assert.match(unknown.rows[0]!.reason!, /unknown/);
  });
});

function lgammaInt(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}
