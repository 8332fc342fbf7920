import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gamma, seededRng } from '../../src/load/random.js';
import { planSchedule } from '../../src/load/schedule.js';

/** Kolmogorov–Smirnov statistic of a sample against a continuous CDF. */
function ksStatistic(sample: number[], cdf: (x: number) => number): number {
  const xs = [...sample].sort((a, b) => a - b);
  const n = xs.length;
  let d = 0;
  xs.forEach((x, i) => {
    const f = cdf(x);
    d = Math.max(d, Math.abs(f - i / n), Math.abs((i + 1) / n - f));
  });
  return d;
}

/** The KS critical value at α = 0.05 for large n (Smirnov's asymptotic 1.358 / √n). */
const ksCritical05 = (n: number): number => 1.358 / Math.sqrt(n);

const gapsOf = (planned: Float64Array): number[] => Array.from(planned.slice(1), (t, i) => t - planned[i]!);

describe('load schedule: arrivals from a seeded Poisson or gamma process', () => {
  it('the same seed gives the same schedule; another seed another one', () => {
    const a = planSchedule({ request_rate: 5, burstiness: 1, num_requests: 200, seed: 7 });
    const b = planSchedule({ request_rate: 5, burstiness: 1, num_requests: 200, seed: 7 });
    const c = planSchedule({ request_rate: 5, burstiness: 1, num_requests: 200, seed: 8 });
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.equal(a[0], 0);
    for (let i = 1; i < a.length; i++) assert.ok(a[i]! >= a[i - 1]!);
  });

  for (const seed of [0, 1, 42]) {
    it(`Poisson inter-arrival gaps pass a Kolmogorov–Smirnov test against Exp(rate) at seed ${seed}`, () => {
      const rate = 20; // requests/s
      const gaps_s = gapsOf(planSchedule({ request_rate: rate, burstiness: 1, num_requests: 4001, seed })).map((g) => g / 1000);
      const d = ksStatistic(gaps_s, (x) => 1 - Math.exp(-rate * x));
      assert.ok(d < ksCritical05(gaps_s.length), `D = ${d} ≥ ${ksCritical05(gaps_s.length)}`);
      // …and a wrong rate is rejected by the same test (the test can fail).
      const wrong = ksStatistic(gaps_s, (x) => 1 - Math.exp(-rate * 1.2 * x));
      assert.ok(wrong > ksCritical05(gaps_s.length), `D against a 20 % faster rate = ${wrong}`);
    });
  }

  it('burstiness B keeps the mean rate and sets the gaps\' coefficient of variation to 1/√B (gamma shape B)', () => {
    for (const b of [0.25, 1, 4]) {
      const gaps = gapsOf(planSchedule({ request_rate: 10, burstiness: b, num_requests: 20001, seed: 3 }));
      const mean = gaps.reduce((s, g) => s + g, 0) / gaps.length;
      const sd = Math.sqrt(gaps.reduce((s, g) => s + (g - mean) ** 2, 0) / gaps.length);
      assert.ok(Math.abs(mean - 100) < 3, `B=${b}: mean gap ${mean} ms, expected 100`);
      assert.ok(Math.abs(sd / mean - 1 / Math.sqrt(b)) < 0.06, `B=${b}: CV ${sd / mean}, expected ${1 / Math.sqrt(b)}`);
    }
  });

  it('gamma draws for shape 4 pass a KS test against the gamma CDF (Erlang-4)', () => {
    const rng = seededRng(11);
    const xs = Array.from({ length: 3000 }, () => gamma(rng, 4, 0.5));
    // Erlang(k=4, λ=2) CDF: 1 − Σ_{n<4} e^{−λx}(λx)^n / n!
    const cdf = (x: number): number => {
      const l = 2 * x;
      return 1 - Math.exp(-l) * (1 + l + (l * l) / 2 + (l * l * l) / 6);
    };
    assert.ok(ksStatistic(xs, cdf) < ksCritical05(xs.length));
  });

  it('rate inf sends every request at 0; bad settings are refused', () => {
    assert.deepEqual([...planSchedule({ request_rate: Infinity, burstiness: 1, num_requests: 5, seed: 0 })], [0, 0, 0, 0, 0]);
    assert.throws(() => planSchedule({ request_rate: 0, burstiness: 1, num_requests: 5, seed: 0 }), /request_rate/);
    assert.throws(() => planSchedule({ request_rate: 1, burstiness: 0, num_requests: 5, seed: 0 }), /burstiness/);
    assert.throws(() => planSchedule({ request_rate: 1, burstiness: 1, num_requests: 1.5, seed: 0 }), /num_requests/);
  });
});
