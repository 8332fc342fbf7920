import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildLoadBlock } from '../../src/load/block.js';
import { itlOf, meetsSlo, schedulingLag, servingMetrics, tpotOf } from '../../src/load/metrics.js';
import { percentileLinear, summarize } from '../../src/stats/serving-summary.js';
import { steadyStateEnergy, steadyWindow, tokensBetween } from '../../src/load/steady.js';
import { rec } from './record-fixture.js';

describe('serving metrics: vLLM bench serve definitions', () => {
  it('percentiles interpolate linearly between ranks (numpy\'s default), std is the population one', () => {
    const xs = Float64Array.from([1, 2, 3, 4, 10]);
    assert.equal(percentileLinear(xs, 50), 3);
    assert.ok(Math.abs(percentileLinear(xs, 90)! - 7.6) < 1e-12); // rank 3.6: 4 + 0.6 × 6
    assert.ok(Math.abs(percentileLinear(xs, 99)! - 9.76) < 1e-12);
    const s = summarize([1, 2, 3, 4, 10], [99]);
    assert.equal(s.mean, 4);
    assert.equal(s.std, Math.round(Math.sqrt((9 + 4 + 1 + 0 + 36) / 5) * 1000) / 1000);
    assert.deepEqual(summarize([], [99]), { mean: null, median: null, std: null, percentiles: { '99': null } });
  });

  it('TPOT = (e2e − TTFT) ÷ (output tokens − 1) per request; one output token has none; ITL pools every chunk gap after the first token', () => {
    assert.equal(tpotOf(rec({ ttft_ms: 20, e2e_ms: 110, output_tokens: 10 })), 10);
    assert.equal(tpotOf(rec({ output_tokens: 1 })), null);
    assert.equal(tpotOf(rec({ ttft_ms: null })), null);
    // Reasoning chunks at 5 and 8 ms come before the first visible token at 20 ms: not in ITL with content TTFT.
    assert.deepEqual(itlOf(rec({ ttft_ms: 20, token_times_ms: [5, 8, 20, 23, 31] })), [3, 8]);
    const m = servingMetrics(
      [rec({ ttft_ms: 20, e2e_ms: 110, output_tokens: 10, token_times_ms: [20, 30, 40] }), rec({ ttft_ms: 40, e2e_ms: 40, output_tokens: 1, token_times_ms: [40], sent_at_ms: 50 })],
      [50],
      null,
    );
    assert.equal(m.completed, 2);
    assert.equal(m['mean_tpot_ms'], 10); // only the first request has a TPOT
    assert.deepEqual([m['mean_itl_ms'], m['median_ttft_ms']], [10, 30]);
    assert.equal(m.duration, 0.11); // the last reply ends at 110 ms
    assert.equal(m.total_output_tokens, 11);
    assert.equal(m.request_throughput, Math.round((2 / 0.11) * 1e4) / 1e4);
    assert.equal(m.request_goodput, null);
  });

  it('goodput counts exactly the requests that meet every SLO; correct goodput those that were also correct', () => {
    const records = [
      rec({ ttft_ms: 10, e2e_ms: 100, passed: true }),
      rec({ ttft_ms: 10, e2e_ms: 100, passed: false }),
      rec({ ttft_ms: 300, e2e_ms: 400, passed: true }), // misses TTFT
      rec({ ttft_ms: 10, e2e_ms: 2500, output_tokens: 10, passed: true }), // misses TPOT (277 ms) and e2e
      rec({ ok: false, passed: false }),
      rec({ ttft_ms: 10, e2e_ms: 100, output_tokens: 1, passed: true }), // one token: no TPOT, counts as met
    ];
    const slo = { ttft_ms: 200, tpot_ms: 50, e2el_ms: 2000 };
    assert.deepEqual(
      records.map((r) => meetsSlo(r, slo)),
      [true, true, false, false, false, true],
    );
    const m = servingMetrics(records, [99], slo);
    assert.equal(m.good_requests, 3);
    assert.equal(m.good_correct_requests, 2);
    assert.equal(m.request_goodput, Math.round((3 / m.duration) * 1e4) / 1e4);
    assert.equal(m.correct_goodput, Math.round((2 / m.duration) * 1e4) / 1e4);
  });

  it('scheduling lag: p99 over 10 ms says the client was the bottleneck', () => {
    // One late request in 100: p99 interpolates between ranks 98 and 99 (0.2 + 0.01 × 49.8), not a bottleneck.
    const one = schedulingLag(Array.from({ length: 100 }, (_, i) => rec({ lag_ms: i === 99 ? 50 : 0.2 })));
    assert.equal(one.p99_lag_ms, 0.698);
    assert.equal(one.client_bottleneck, false);
    const two = schedulingLag(Array.from({ length: 100 }, (_, i) => rec({ lag_ms: i >= 98 ? 50 : 0.2 })));
    assert.equal(two.client_bottleneck, true);
    const fine = schedulingLag(Array.from({ length: 100 }, () => rec({ lag_ms: 0.3 })));
    assert.equal(fine.client_bottleneck, false);
    assert.equal(fine.p99_lag_ms, 0.3);
  });
});

describe('steady state: the ML.ENERGY window rule', () => {
  it('on a recorded timeline, runs from the B-th first token to the (N−B)-th', () => {
    // 10 requests, first tokens (ms) in arrival order not sorted; B = 2.
    const firsts = [120, 100, 300, 250, 400, 500, 650, 600, 800, 900];
    const w = steadyWindow(firsts, 2, 10);
    assert.deepEqual(w, { start_ms: 120, end_ms: 650, b: 2, n: 10 }); // sorted: 100,120,…,600,650,800,900 → 2nd and 8th
    assert.match((steadyWindow(firsts, 5, 10) as { reason: string }).reason, /N > 2B/);
    assert.match((steadyWindow(firsts.slice(0, 6), 2, 10) as { reason: string }).reason, /only 6 of 10/);
  });

  it('tokens inside the window: each request\'s tokens spread over its chunks', () => {
    const rs = [rec({ sent_at_ms: 0, output_tokens: 4, token_times_ms: [10, 20, 30, 40] }), rec({ sent_at_ms: 100, output_tokens: 2, token_times_ms: [] , e2e_ms: 5 })];
    assert.equal(tokensBetween(rs, 15, 35), 2);
    assert.equal(tokensBetween(rs, 0, 200), 6);
    assert.equal(tokensBetween([rec({ output_tokens: null })], 0, 1), null);
  });

  const reading = (joules: number, window_ms: number) => ({ joules, source: 'rapl' as const, window_ms, below_floor: false });

  it('a usable steady window gives J/token over that window; shorter than 5 s falls back to the whole run, flagged', () => {
    const records = [rec({ sent_at_ms: 0, output_tokens: 100, token_times_ms: Array.from({ length: 100 }, (_, i) => i * 100) })];
    const base = { run: reading(200, 10_000), run_start_ms: 0, run_end_ms: 10_000, idle: { status: 'measured' as const, watts: 5 }, floor_ms: 1, records };
    const steady = steadyStateEnergy({ ...base, window: { start_ms: 1000, end_ms: 7000 }, window_reason: null, steady: reading(120, 6000) });
    assert.equal(steady.steady_state, true);
    assert.equal(steady.energy_window_s, 6);
    assert.equal(steady.output_tokens, 61); // chunks at 1000…7000 ms inclusive
    assert.equal(steady.joules_per_output_token, Math.round((120 / 61) * 1e9) / 1e9);
    assert.equal(steady.net_joules, 90); // 120 − 5 W × 6 s
    assert.equal(steady.avg_power_w, 20);
    const short = steadyStateEnergy({ ...base, window: { start_ms: 1000, end_ms: 4000 }, window_reason: null, steady: reading(60, 3000) });
    assert.equal(short.steady_state, false);
    assert.match(short.reason ?? '', /shorter than 5 s: the whole run is used/);
    assert.equal(short.joules, 200);
    assert.equal(short.output_tokens, 100);
    assert.equal(short.joules_per_output_token, 2);
  });

  it('goodput per token: output tokens/s of the requests meeting the SLO, and per joule of the energy window', () => {
    const opts = { request_rate: 10, burstiness: 1, seed: 0, max_concurrency: null, num_requests: 3, percentiles: [99], slo: { ttft_ms: 50 }, ttft_token: 'content' as const };
    // Two requests meet TTFT ≤ 50 ms (10 and 30 output tokens), one misses it (100 tokens); the run lasts 1 s.
    const records = [
      rec({ ttft_ms: 10, e2e_ms: 1000, output_tokens: 10, token_times_ms: [10, 500] }),
      rec({ ttft_ms: 30, e2e_ms: 800, output_tokens: 30, token_times_ms: [30, 700] }),
      rec({ ttft_ms: 90, e2e_ms: 900, output_tokens: 100, token_times_ms: [90, 800] }),
    ];
    const m = servingMetrics(records, [99], opts.slo);
    assert.equal(m.output_goodput, 40);
    assert.equal(m.output_throughput, 140);
    assert.equal(servingMetrics(records, [99], null).output_goodput, null);
    const run = { joules: 20, source: 'rapl' as const, window_ms: 1000, below_floor: false };
    const b = buildLoadBlock(opts, records, { first_token_at_ms: [10, 30, 90], steady: null, measured_window: null, run, run_end_ms: 1000, idle: { status: 'skipped', watts: null }, floor_ms: 1 });
    assert.equal(b.energy.steady_state, false); // N ≤ 2B: the whole run
    assert.equal(b.good_output_tokens_per_joule, 2); // 40 good tokens ÷ 20 J
    assert.equal(b.energy.output_tokens_per_joule, 7);
    assert.equal(buildLoadBlock({ ...opts, slo: null }, records, { first_token_at_ms: [], steady: null, measured_window: null, run, run_end_ms: 1000, idle: { status: 'skipped', watts: null }, floor_ms: 1 }).good_output_tokens_per_joule, null);
    assert.equal(b.joules_per_good_request, 10);
    // An invalid window gives no energy per good request or token; its reading stays.
    const validity = { valid: false, reasons: ['1 failed read(s)'], meter: 'rapl', devices: ['package-0'], samples: 3, coverage_pct: 100, max_gap_ms: 400, wraps: 0, failed_reads: 1 };
    const bad = buildLoadBlock(opts, records, { first_token_at_ms: [10, 30, 90], steady: null, measured_window: null, run: { ...run, validity }, run_end_ms: 1000, idle: { status: 'skipped', watts: null }, floor_ms: 1 });
    assert.equal(bad.energy.joules, 20);
    assert.deepEqual([bad.joules_per_good_request, bad.goodput_per_watt, bad.good_output_tokens_per_joule, bad.energy.joules_per_output_token], [null, null, null, null]);
  });

  it('the block names why: no steady part, no meter', () => {
    const opts = { request_rate: 10, burstiness: 1, seed: 0, max_concurrency: 4, num_requests: 6, percentiles: [99], slo: null, ttft_token: 'content' as const };
    const b = buildLoadBlock(opts, [rec({})], { first_token_at_ms: [1, 2, 3, 4, 5, 6], steady: null, measured_window: null, run: null, run_end_ms: 100, idle: { status: 'skipped', watts: null }, floor_ms: 1 });
    assert.equal(b.energy.steady_state, false);
    assert.match(b.energy.reason ?? '', /N > 2B/);
    assert.equal(b.energy.joules, null);
    assert.equal(b.request_rate, 10);
  });
});
