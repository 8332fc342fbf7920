import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_PUE, ECOLOGITS_COEFFICIENTS, ECOLOGITS_VERSION, ecologitsRequestEnergy, gpuCount } from '../../src/core/ecologits.js';

const one = (x: number) => ({ low: x, high: x });

describe('EcoLogits 0.9.1 request energy', () => {
  it('pins the published version and coefficients (methodology page: α 1.17e-6, β −1.12e-2, γ 4.05e-5; latency 6.78e-4, 3.12e-4, 1.94e-2)', () => {
    assert.equal(ECOLOGITS_VERSION, '0.9.1');
    const c = ECOLOGITS_COEFFICIENTS;
    assert.equal(Number(c.gpu_energy_alpha.toPrecision(3)), 1.17e-6);
    assert.equal(Number(c.gpu_energy_beta.toPrecision(3)), -1.12e-2);
    assert.equal(Number(c.gpu_energy_gamma.toPrecision(3)), 4.05e-5);
    assert.equal(Number(c.latency_alpha.toPrecision(3)), 6.79e-4);
    assert.equal(Number(c.latency_beta.toPrecision(3)), 3.12e-4);
    assert.equal(Number(c.latency_gamma.toPrecision(3)), 1.95e-2);
  });

  it('a dense 70B model, 1000 output tokens, PUE 1.2: 2367.1 J, worked by hand', () => {
    // GPU Wh/token = 1.16653e-6 · e^(−0.011206·64) · 70 + 4.0529e-5 = 8.0386e-5 → ×1000 tokens = 8.0386e-5 kWh per GPU
    // GPUs: 1.2 · 70 · 16/8 = 168 GB → 3 × 80 GB → 4 (power of two)
    // latency = 1000 · (6.7851e-4·70 + 3.1193e-4·64 + 1.9474e-2) = 86.93 s; server = 86.93/3600 · 1.2 · 4/8 / 64 = 2.2638e-4 kWh
    // request = 1.2 · (2.2638e-4 + 4 · 8.0386e-5) = 6.5753e-4 kWh = 2367.1 J
    const e = ecologitsRequestEnergy({ active_params_b: one(70), total_params_b: one(70), output_tokens: 1000, request_latency_s: null, pue: one(1.2) });
    assert.ok(Math.abs(e.joules - 2367.1) < 0.1, String(e.joules));
    assert.deepEqual(e.range_j, { low: e.joules, high: e.joules });
  });

  it('GPU count: memory at 16 bit + 20 %, rounded up to a power of two', () => {
    assert.equal(gpuCount(8), 1);
    assert.equal(gpuCount(70), 4);
    assert.equal(gpuCount(405), 16);
    assert.equal(gpuCount(671), 32);
  });

  it('MoE: energy follows the active parameters, the GPU count the total', () => {
    const moe = ecologitsRequestEnergy({ active_params_b: one(12.9), total_params_b: one(46.7), output_tokens: 500, request_latency_s: null, pue: one(1) });
    const dense13 = ecologitsRequestEnergy({ active_params_b: one(12.9), total_params_b: one(12.9), output_tokens: 500, request_latency_s: null, pue: one(1) });
    assert.equal(gpuCount(46.7), 2);
    assert.ok(moe.joules > 1.9 * dense13.joules && moe.joules < 2.1 * dense13.joules, 'two GPUs hold the MoE weights, one the dense');
  });

  it('ranges in parameters and PUE give low ≤ mid ≤ high, each end computed from the matching ends', () => {
    const e = ecologitsRequestEnergy({ active_params_b: { low: 100, high: 300 }, total_params_b: { low: 1000, high: 1000 }, output_tokens: 200, request_latency_s: null, pue: DEFAULT_PUE });
    const lo = ecologitsRequestEnergy({ active_params_b: one(100), total_params_b: one(1000), output_tokens: 200, request_latency_s: null, pue: one(DEFAULT_PUE.low) });
    const hi = ecologitsRequestEnergy({ active_params_b: one(300), total_params_b: one(1000), output_tokens: 200, request_latency_s: null, pue: one(DEFAULT_PUE.high) });
    assert.equal(e.range_j.low, lo.joules);
    assert.equal(e.range_j.high, hi.joules);
    assert.equal(e.joules, (lo.joules + hi.joules) / 2);
  });

  it('a measured request latency below the modelled one caps the server share; zero tokens cost nothing', () => {
    const free = ecologitsRequestEnergy({ active_params_b: one(8), total_params_b: one(8), output_tokens: 100, request_latency_s: null, pue: one(1) });
    const capped = ecologitsRequestEnergy({ active_params_b: one(8), total_params_b: one(8), output_tokens: 100, request_latency_s: 0.001, pue: one(1) });
    assert.ok(capped.joules < free.joules);
    assert.equal(ecologitsRequestEnergy({ active_params_b: one(8), total_params_b: one(8), output_tokens: 0, request_latency_s: null, pue: one(1.2) }).joules, 0);
  });

  it('refuses inputs the method has no meaning for', () => {
    const ok = { active_params_b: one(8), total_params_b: one(8), output_tokens: 1, request_latency_s: null, pue: one(1.2) };
    assert.throws(() => ecologitsRequestEnergy({ ...ok, pue: one(0.8) }), /pue must be/);
    assert.throws(() => ecologitsRequestEnergy({ ...ok, active_params_b: { low: 9, high: 8 } }), /low <= high/);
    assert.throws(() => ecologitsRequestEnergy({ ...ok, active_params_b: one(Number.NaN) }), /active_params_b/);
    assert.throws(() => ecologitsRequestEnergy({ ...ok, output_tokens: -1 }), /output_tokens/);
  });
});
