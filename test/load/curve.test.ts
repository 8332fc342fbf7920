import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BenchReport } from '../../src/core/aggregate.js';
import type { LoadBlock } from '../../src/load/block.js';
import { compareRates, energyKind } from '../../src/load/curve.js';
import { rateCurvesOf } from '../../src/report/html/rate-section.js';

/** A load run's report, only the fields the rate curve reads. */
function run(label: string, rate: number | 'inf', j: number | null, source: string, target = 'openai:m'): { label: string; report: BenchReport & { load: LoadBlock } } {
  const load = {
    request_rate: rate,
    burstiness: 1,
    seed: 0,
    max_concurrency: 2,
    num_requests: 10,
    ttft_token: 'content',
    serving: { request_throughput: 1, output_throughput: 10, p99_ttft_ms: 5, p99_tpot_ms: 1, request_goodput: null, correct_goodput: null },
    scheduling: { client_bottleneck: false },
    energy: { joules_per_output_token: j, source, steady_state: true },
  };
  return { label, report: { accuracy_pct: 100, target, suite: { name: 's', version: '1', digest: 'd' }, load } as unknown as BenchReport & { load: LoadBlock } };
}

describe('rate curves for the HTML page', () => {
  it('orders rates ascending with inf last, and groups runs by system and load setting', () => {
    assert.deepEqual([8, 'inf', 1, 2].sort(compareRates as (a: unknown, b: unknown) => number), [1, 2, 8, 'inf']);
    const curves = rateCurvesOf([run('a', 'inf', 1, 'rapl'), run('b', 2, 1, 'rapl'), run('c', 1, 1, 'rapl'), run('x', 1, 1, 'rapl', 'openai:other')]);
    assert.equal(curves.length, 2);
    assert.deepEqual(curves[0]!.points.map((p) => p.run), ['c', 'b', 'a']);
    assert.deepEqual(curves[0]!.latency, { drawn: true, ttft_points: 3, tpot_points: 3, why: null });
    assert.equal(curves[1]!.latency.drawn, false);
    assert.match(curves[1]!.latency.why!, /only one rate \(1\/s\)/);
  });

  it('measured and modelled J/token never share an axis; a kind with one point is a sentence; mixed sources are not drawn', () => {
    const [c] = rateCurvesOf([run('a', 1, 0.5, 'rapl'), run('b', 2, 0.4, 'nvml'), run('c', 4, 0.3, 'estimate'), run('d', 8, 0.2, 'composite')]);
    assert.deepEqual(
      c!.energy.map((e) => [e.kind, e.points, e.drawn, e.sources]),
      [['measured', 2, true, ['rapl', 'nvml']], ['modelled', 1, false, ['estimate']], ['other', 1, false, ['composite']]],
    );
    assert.match(c!.energy[1]!.why!, /only one rate \(4\/s\) has a modelled J\/output-token figure \[estimate\]/);
    assert.equal(c!.energy_missing, null);
    assert.equal(energyKind('model:api'), 'modelled');
    assert.equal(energyKind('rapl net'), 'measured');
    assert.equal(energyKind('mixed'), null);
  });

  it('no energy figure at any rate: a sentence saying why instead of the chart', () => {
    const [c] = rateCurvesOf([run('a', 1, null, 'none'), run('b', 2, null, 'none')]);
    assert.deepEqual(c!.energy, []);
    assert.match(c!.energy_missing!, /no meter read energy/);
  });
});
