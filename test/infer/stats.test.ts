import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  armStats,
  checkPrefill,
  coldPrefillMedian,
  decodeMedian,
  defaultPeakFlops,
  firstTokenNumbers,
  firstTokenRatios,
  spreadOverMedian,
  spreadOverWorst,
  summarise,
  threadSweep,
} from '../../src/infer/stats.js';
import type { InferArm, InferPhase, InferRun } from '../../src/infer/types.js';

/** A run with the fields the rules read; everything else neutral. */
function run(phase: InferPhase, over: Partial<InferRun> = {}): InferRun {
  return {
    phase,
    index: 0,
    started_utc: '2026-01-01T00:00:00.000Z',
    prompt_eval_count: 537,
    prompt_eval_duration_ns: null,
    eval_count: 128,
    eval_duration_ns: null,
    load_duration_ns: 0,
    total_duration_ns: null,
    decode_tok_s: null,
    prefill_tok_s: null,
    prefill_kind: phase === 'cold' ? 'cold' : 'cached-prefix',
    ttft_ms: null,
    e2e_ms: 0,
    energy_j: null,
    energy_basis: 'gross',
    energy_source: 'none',
    below_floor: false,
    j_per_decoded_token: null,
    decoded_tokens_per_j: null,
    ...over,
  };
}

function arm(over: Partial<InferArm> = {}): InferArm {
  return {
    id: 'm1@t=default',
    model: 'm1',
    num_thread: null,
    parameter_count: 9e9,
    parameter_source: 'model_info.general.parameter_count',
    started_utc: '2026-01-01T00:00:00.000Z',
    finished_utc: '2026-01-01T00:10:00.000Z',
    cold_load: [],
    warmup_discarded: [],
    runs: [],
    receipts: { size_vram: 0, cpu_only_receipt: true, expires_at_utc: null, nvidia_before: null, nvidia_after: null, gpu_snapshot: 'unavailable', gpu_snapshot_error: null },
    contaminated: false,
    contamination: null,
    ...over,
  };
}

const decodeRuns = (values: number[]): InferRun[] => values.map((v, index) => run('scored', { index, decode_tok_s: v }));

describe('rule 1: decode = median of the scored runs, warmup discarded', () => {
  it('takes the median of the scored runs (seed example 13.594)', () => {
    assert.equal(decodeMedian(arm({ runs: decodeRuns([13.7, 13.594, 13.2, 13.65, 13.5]) })), 13.594);
  });
  it('never lets the warmup in, even a wildly different one', () => {
    const a = arm({ warmup_discarded: [run('warmup', { decode_tok_s: 1 })], runs: decodeRuns([10, 11, 12]) });
    assert.equal(decodeMedian(a), 11);
    assert.equal(armStats(a, null).warmup_discarded, 1);
    // A warmup run that found its way into runs[] is still not counted.
    const leaked = arm({ runs: [run('warmup', { decode_tok_s: 1000 }), ...decodeRuns([10, 11, 12])] });
    assert.equal(decodeMedian(leaked), 11);
  });
  it('is the median, not the mean', () => {
    assert.equal(decodeMedian(arm({ runs: decodeRuns([10, 10, 10, 10, 100]) })), 10);
  });
});

describe('rule 2: true prefill from cold runs only; the warm figure is a cached-prefix artifact', () => {
  const a = arm({
    cold_load: [33.5, 33.6, 33.4].map((v) => run('cold', { prefill_tok_s: v })),
    runs: [2613, 2600, 2620].map((v) => run('scored', { prefill_tok_s: v, decode_tok_s: 13 })),
  });
  it('the prefill median reads the cold runs and nothing else (seed: 33.5 not 2613)', () => {
    assert.equal(coldPrefillMedian(a), 33.5);
    const s = armStats(a, defaultPeakFlops(12, 256));
    assert.equal(s.prefill_tok_s_cold.value, 33.5);
    assert.match(s.prefill_tok_s_cold.rule, /cold runs only/);
  });
  it('the warm figure is kept under a name that says it is not prefill', () => {
    const s = armStats(a, null);
    assert.equal(s.cached_prefix_rate_not_prefill.value, 2613);
    assert.match(s.cached_prefix_rate_not_prefill.label, /cached-prefix.*do not publish/);
  });
  it('with no cold runs there is no prefill figure at all (never the warm one)', () => {
    const warmOnly = arm({ runs: a.runs });
    assert.equal(coldPrefillMedian(warmOnly), null);
    assert.equal(armStats(warmOnly, null).prefill_tok_s_cold.value, null);
  });
});

describe('plausibility: 2 × parameters × tok/s against the machine peak', () => {
  const mini = defaultPeakFlops(12, 256); // a 12-core AVX2 mini-PC
  it('the default peak is cores × GHz × lanes × 2 × 2 and names its formula', () => {
    assert.equal(mini.flops, 12 * 5e9 * 8 * 4);
    assert.match(mini.source, /12 cores × 5 GHz × 8 fp32 lanes/);
  });
  it("flags the seed's 2,613 tok/s on a 9B model (~47 TFLOPS) as a cached-prefix artifact", () => {
    const c = checkPrefill(2613, 9e9, mini);
    assert.ok(Math.abs(c.implied_flops! - 47.03e12) < 0.01e12, 'Math.abs(c.implied_flops! - 47.03e12) < 0.01e12');
    assert.equal(c.plausible, false);
    assert.equal(c.flag, 'cached-prefix artifact');
  });
  it('passes the cold 33.6 tok/s', () => {
    assert.equal(checkPrefill(33.6, 9e9, mini).plausible, true);
  });
  it('a "cold" figure over the peak is flagged and not published as prefill', () => {
    const a = arm({ cold_load: [run('cold', { prefill_tok_s: 2613 })], runs: decodeRuns([13]) });
    const s = armStats(a, mini);
    assert.equal(s.plausibility.cold_prefill.plausible, false);
    assert.equal(s.prefill_tok_s_cold.value, null);
    assert.ok(s.flags.some((f) => /cached-prefix artifact/.test(f)), 's.flags.some((f) => /cached-prefix artifact/.test(f))');
  });
  it('no peak or no parameter count: no verdict rather than a guess', () => {
    assert.equal(checkPrefill(2613, null, mini).plausible, null);
    assert.equal(checkPrefill(2613, 9e9, null).plausible, null);
  });
});

describe('rule 3: four first-token numbers, each with its denominator', () => {
  // Seed 004's 9B-on-mini medians: cached 210.8, cold 20,375.3, load 4,344.2 → fresh 16,031.1.
  const a = arm({
    cold_load: [
      run('cold', { ttft_ms: 20_375.3, load_duration_ns: 4_344.2e6 }),
      run('cold', { ttft_ms: 20_500, load_duration_ns: 4_400e6 }),
      run('cold', { ttft_ms: 20_300, load_duration_ns: 4_300e6 }),
    ],
    runs: [210.8, 209, 215].map((t) => run('scored', { ttft_ms: t, decode_tok_s: 13 })),
  });
  const ft = firstTokenNumbers(a);
  it('labels each number and computes fresh = cold − load per run, then the median', () => {
    assert.equal(ft.cached_prefix_ms.value, 210.8);
    assert.equal(ft.fully_cold_ms.value, 20_375.3);
    // per run: 16031.1, 16100, 16000 → median 16031.1 (not median(cold) − median(load) = 16031.1 by luck; check the rule text too)
    assert.ok(Math.abs(ft.fresh_prompt_model_loaded_ms.value! - 16_031.1) < 1e-6, 'Math.abs(ft.fresh_prompt_model_loaded_ms.value! - 16_031.1) < 1e-6');
    assert.match(ft.cached_prefix_ms.label, /cached-prefix.*not a TTFT/);
    assert.match(ft.fresh_prompt_model_loaded_ms.label, /fresh prompt, model already loaded/);
    assert.match(ft.fully_cold_ms.label, /fully cold/);
    assert.equal(ft.decode_tok_s.value, 13);
  });
  it('gives the 76× (model-loaded) and 96.7× (cold-start) ratios, each naming its pair', () => {
    const r = firstTokenRatios(ft);
    assert.ok(Math.abs(r.model_loaded_rule.value! - 16_031.1 / 210.8) < 1e-9, 'model-loaded rule = 16031.1 / 210.8 (76.05x)');
    assert.equal(Math.round(r.model_loaded_rule.value!), 76);
    assert.equal(r.cold_start_rule.value!.toFixed(1), '96.7');
    assert.match(r.model_loaded_rule.numerator, /model already loaded/);
    assert.match(r.cold_start_rule.numerator, /including the model load/);
    assert.equal(r.model_loaded_rule.denominator, 'cached-prefix first token');
    assert.match(r.statistic, /median of the cold runs ÷ median of the scored runs/);
  });
  it('fresh is computed per cold run, not from a different pairing', () => {
    // Loads that vary against ttfts: median(ttft − load) ≠ median(ttft) − median(load).
    const b = arm({
      cold_load: [
        run('cold', { ttft_ms: 1000, load_duration_ns: 900e6 }),
        run('cold', { ttft_ms: 2000, load_duration_ns: 100e6 }),
        run('cold', { ttft_ms: 3000, load_duration_ns: 500e6 }),
      ],
    });
    assert.equal(firstTokenNumbers(b).fresh_prompt_model_loaded_ms.value, 1900); // 100, 1900, 2500
  });
});

describe('rule 5: spread statistics name their denominator', () => {
  it('(max − min) ÷ median, not ÷ min', () => {
    assert.equal(spreadOverMedian([100, 103, 106]), 6 / 103);
    assert.notEqual(spreadOverMedian([100, 103, 106]), 6 / 100);
    const s = armStats(arm({ runs: decodeRuns([100, 103, 106]) }), null);
    assert.equal(s.decode_spread.value, 6 / 103);
    assert.match(s.decode_spread.rule, /\(max − min\) ÷ median/);
  });
  it('the triad rule is (best − worst) ÷ worst: 20.5% on the seed laptop', () => {
    assert.equal(spreadOverWorst([59.31, 49.21])!.toFixed(3), '0.205');
  });
});

describe('rule 4/6: thread sweep, best beside default, 1% tie broken on stability', () => {
  const sweepArm = (t: number | null, values: number[], over: Partial<InferArm> = {}): InferArm =>
    arm({ id: `m1@t=${t ?? 'default'}`, num_thread: t, runs: decodeRuns(values), ...over });
  it('reports the best count and best ÷ default (seed laptop 1.75×)', () => {
    const arms = [sweepArm(null, [7.45, 7.4, 7.5]), sweepArm(20, [13.052, 13.0, 13.1]), sweepArm(8, [10, 10, 10])];
    const s = threadSweep('m1', arms);
    assert.equal(s.best_arm, 'm1@t=20');
    assert.equal(s.best_num_thread, 20);
    assert.equal(s.default_arm, 'm1@t=default');
    assert.equal(s.best_over_default.value!.toFixed(2), '1.75');
    assert.match(s.best_over_default.denominator, /default/);
    assert.equal(s.tie, null);
  });
  it('a tie within 1% goes to the stabler arm, and says so (seed: t=12 over bimodal t=16)', () => {
    const t12 = sweepArm(12, [14.0, 14.01, 14.02, 14.0, 14.01]); // spread 0.14%
    const t16 = sweepArm(16, [13.0, 14.04, 15.5, 14.04, 13.1]); // median 0.2% faster, spread ~17%
    const s = threadSweep('m1', [sweepArm(null, [8, 8, 8]), t12, t16]);
    assert.equal(s.best_arm, 'm1@t=12');
    assert.ok(s.tie, 's.tie');
    assert.equal(s.tie.broken_on, 'stability');
    assert.deepEqual(new Set(s.tie.arms), new Set(['m1@t=12', 'm1@t=16']));
    assert.match(s.tie.note, /not for speed/);
  });
  it('a gap over 1% is not a tie: the faster arm wins even when noisier', () => {
    const s = threadSweep('m1', [sweepArm(null, [8, 8, 8]), sweepArm(12, [14, 14, 14]), sweepArm(16, [14.5, 13, 16])]);
    assert.equal(s.best_arm, 'm1@t=16');
    assert.equal(s.tie, null);
  });
  it('contaminated arms are excluded from the sweep and named', () => {
    const bad = sweepArm(32, [99, 99, 99], { contaminated: true, contamination: 'GPU snapshot changed' });
    const s = threadSweep('m1', [sweepArm(null, [8, 8, 8]), sweepArm(12, [10, 10, 10]), bad]);
    assert.equal(s.best_arm, 'm1@t=12');
    assert.deepEqual(s.excluded, [{ id: 'm1@t=32', reason: 'GPU snapshot changed' }]);
  });
});

describe('summaries exclude a contaminated arm but keep it named', () => {
  it('no statistics for it, listed under excluded_from_summaries', () => {
    const arms = [arm({ runs: decodeRuns([10]) }), arm({ id: 'm2@t=default', model: 'm2', runs: decodeRuns([50]), contaminated: true, contamination: 'changed' })];
    const s = summarise(arms, () => null);
    assert.equal(s.arms.length, 2);
    assert.equal(s.arms[1]!.stats, null);
    assert.ok(s.arms[0]!.stats, 's.arms[0]!.stats');
    assert.deepEqual(s.excluded_from_summaries, [{ id: 'm2@t=default', reason: 'changed' }]);
  });
});

describe('energy: null when unmeasured, never 0', () => {
  it('medians of J per decoded token and tokens per J; null without readings', () => {
    const measured = armStats(arm({ runs: [run('scored', { energy_j: 64, energy_source: 'rapl', j_per_decoded_token: 0.5, decoded_tokens_per_j: 2 })] }), null);
    assert.equal(measured.energy.j_per_decoded_token_median, 0.5);
    assert.equal(measured.energy.decoded_tokens_per_j_median, 2);
    assert.equal(measured.energy.source, 'rapl');
    const none = armStats(arm({ runs: decodeRuns([10]) }), null);
    assert.equal(none.energy.j_per_decoded_token_median, null);
    assert.equal(none.energy.joules_median, null);
    assert.equal(none.energy.source, 'none');
  });
});

describe('a collapsed decode rate is a warning naming oversubscribed threads', () => {
  it('an arm under 1/10 of another arm of the same model is flagged and warned; a slower arm above it is not', () => {
    const arms = [
      arm({ id: 'm1@t=default', num_thread: null, threads: 4, runs: decodeRuns([0.52, 0.55, 0.57]) }),
      arm({ id: 'm1@t=1', num_thread: 1, runs: decodeRuns([4630, 5000, 7500]) }),
      arm({ id: 'm1@t=2', num_thread: 2, runs: decodeRuns([600, 610, 620]) }),
      arm({ id: 'm2@t=default', model: 'm2', runs: decodeRuns([0.5]) }),
    ];
    const s = summarise(arms, () => null);
    assert.equal(s.warnings.length, 1, s.warnings.join('\n'));
    assert.match(s.warnings[0]!, /^m1@t=default: decode 0\.5500 tok\/s is under 0\.1 of m1@t=1's 5000 tok\/s on the same model: oversubscribed threads \(4 threads/);
    assert.ok(s.arms[0]!.stats!.flags.some((f) => /oversubscribed threads/.test(f)));
    assert.ok(!s.arms[2]!.stats!.flags.some((f) => /oversubscribed/.test(f)), 't=2 is slower, not collapsed');
    assert.ok(!s.arms[3]!.stats!.flags.some((f) => /oversubscribed/.test(f)), 'another model is not compared');
  });
});

describe('plausibility: an above-peak rate from runs confirmed cold', () => {
  const mini = defaultPeakFlops(12, 256);
  it('is not called a cached-prefix artifact: the peak, parameter count or token count is wrong', () => {
    for (const proof of [{ fresh_load: true as const }, { unload: { keep_alive_0: true as const, absent_from_ps: true as const, ps_polls: 1 } }]) {
      const a = arm({ cold_load: [run('cold', { prefill_tok_s: 2613, ...proof })], runs: decodeRuns([13]) });
      const s = armStats(a, mini);
      assert.equal(s.plausibility.cold_prefill.flag, 'inputs wrong');
      assert.equal(s.prefill_tok_s_cold.value, null, 'still not published as prefill');
      const f = s.flags.find((x) => /cold prefill/.test(x))!;
      assert.doesNotMatch(f, /so most likely a cached-prefix artifact/);
      assert.match(f, /confirmed cold.*not a cached-prefix artifact: an input is wrong — the peak \(default ceiling: 12 cores.*--peak-flops.*the parameter count \(model_info\.general\.parameter_count\), or the prompt tokens counted/);
    }
  });
});
