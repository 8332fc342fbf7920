import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoadBlock } from '../../src/load/block.js';
import { pairedRepeats, repeatSummary, type RepeatRun } from '../../src/load/repeats.js';

/** One run of a repeated load run, only the fields the summary reads. */
function run(throughput: number | null, j: number | null, source = 'rapl', steady = true, bottleneck = false): RepeatRun {
  const load = {
    request_rate: 4,
    serving: { completed: 10, request_throughput: throughput, p99_ttft_ms: 100, request_goodput: null, slo: null, output_tokens_from: 'usage' },
    scheduling: { client_bottleneck: bottleneck },
    energy: { joules_per_output_token: j, net_joules_per_output_token: null, output_tokens_per_joule: null, avg_power_w: null, source, steady_state: steady },
    joules_per_good_request: null,
    goodput_per_watt: null,
  };
  return { accuracy_pct: 90, load: load as unknown as LoadBlock };
}

describe('figures over repeated load runs', () => {
  it('a t-interval per figure; a figure some run lacks has none, with the run named; strings are not figures', () => {
    const s = repeatSummary([run(10, 0.5), run(12, 0.6), run(null, 0.7)]);
    assert.deepEqual(s.figures.request_throughput, { values: [10, 12, null], mean: null, sd: null, cv: null, ci: { reason: 'no value in run 3' } });
    const j = s.figures.joules_per_output_token!;
    // mean 0.6, sd 0.1, t(0.975, 2) = 4.30265273 from the t table
    assert.ok(Math.abs(j.mean! - 0.6) < 1e-12);
    assert.ok(Math.abs(j.cv! - 0.1 / 0.6) < 1e-9);
    const ci = j.ci as { low: number; high: number; method: string };
    assert.ok(Math.abs(ci.low - (0.6 - (4.30265273 * 0.1) / Math.sqrt(3))) < 1e-8, String(ci.low));
    assert.equal(ci.method, 'student-t');
    assert.deepEqual(s.figures.p99_ttft_ms!.ci, { low: 100, high: 100, level: 0.95, method: 'degenerate', t_critical: 4.30265273 });
    assert.equal(s.figures.output_tokens_from, undefined);
    assert.equal(s.figures.slo, undefined);
    assert.deepEqual(s.notes, []);
  });

  it('energy measured differently across runs, or over different windows, gets no statistics', () => {
    const s = repeatSummary([run(10, 0.5), run(12, 0.6, 'model')]);
    assert.match((s.figures.joules_per_output_token!.ci as { reason: string }).reason, /energy measured differently across runs \(rapl, model\)/);
    assert.equal(s.figures.joules_per_output_token!.mean, null);
    assert.equal((s.figures.request_throughput!.ci as { method: string }).method, 'student-t');
    const w = repeatSummary([run(10, 0.5, 'rapl', true), run(12, 0.6, 'rapl', false, true)]);
    assert.match((w.figures.joules_per_output_token!.ci as { reason: string }).reason, /steady-state window and others the whole run/);
    assert.match(w.notes.join('\n'), /the client limited the request rate in run 2/);
  });

  it('pairs run i with run i: differences and the paired t-interval; unequal counts pair the common prefix and say so', () => {
    const c = pairedRepeats([run(10, 0.5), run(12, 0.5), run(11, 0.5)], [run(12, 0.4), run(15, 0.4)]);
    assert.equal(c.paired_runs, 2);
    assert.match(c.notes.join('\n'), /the baseline has 3 runs and the candidate 2: runs 1–2 are paired, the baseline's run 3 is left out/);
    const f = c.figures.request_throughput!;
    assert.deepEqual(f.differences, [2, 3]);
    assert.equal(f.mean_difference, 2.5);
    // differences 2, 3: sd 1/√2, t(0.975, 1) = 12.70620474
    const ci = f.ci as { low: number; high: number; method: string };
    assert.equal(ci.method, 'paired-t');
    assert.ok(Math.abs(ci.low - (2.5 - 12.70620474 * (Math.SQRT1_2 / Math.SQRT2))) < 1e-6, String(ci.low));
    assert.deepEqual(c.figures.joules_per_output_token!.differences, [-0.1, -0.1]);
  });

  it('a figure only one side has (other --percentiles) is named in a note, not dropped silently', () => {
    const extra = run(12, 0.4);
    (extra.load.serving as unknown as Record<string, unknown>).p90_ttft_ms = 80;
    const c = pairedRepeats([run(10, 0.5), run(11, 0.5)], [extra, extra]);
    assert.equal(c.figures.p90_ttft_ms, undefined);
    assert.match(c.notes.join('\n'), /only the candidate has p90_ttft_ms: not compared/);
    assert.doesNotMatch(c.notes.join('\n'), /only the baseline/);
  });
});
