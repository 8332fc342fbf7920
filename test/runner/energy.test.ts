import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { prettyJson } from '../../src/core/canonical.js';
import { netBelowIdle, netJoules } from '../../src/core/energy.js';
import type { Answer, Case, Suite, Target } from '../../src/core/types.js';
import { createAutoMeter } from '../../src/meters/auto.js';
import { createEstimateMeter } from '../../src/meters/estimate.js';
import { calibrateIdle } from '../../src/meters/idle.js';
import { createModelMeter } from '../../src/meters/model.js';
import { renderReportTable } from '../../src/report/table.js';
import { run } from '../../src/runner/run.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { scriptedMeter } from '../meters/fake-meter.js';

const noWait = async (): Promise<void> => {};

function suiteOf(n: number): Suite {
  const cases: Case[] = Array.from({ length: n }, (_, i) => ({
    id: `c${i}`,
    prompt: `q${i}`,
    expected: `a${i}`,
    dataset: 'toy',
    weight: 1,
    tags: [],
  }));
  return { name: 'toy', version: '1', scorer: 'substring', cases, source: 'test' };
}

/** Answers every case correctly; reports its own energy for the cases listed. */
function target(energyFor: Record<string, number> = {}): Target {
  return {
    id: 'toy',
    kind: 'toy',
    async answer(req): Promise<Answer> {
      const e = energyFor[req.case.id];
      return { text: String(req.case.expected), ...(e !== undefined ? { energy: { joules: e, source: 'model' as const } } : {}) };
    },
    describe: () => ({ kind: 'toy' }),
  };
}

describe('idle calibration', () => {
  it('measures idle watts per domain and in total', async () => {
    const m = scriptedMeter([
      { joules: 12, window_ms: 2000, by_domain: { 'package-0': { joules: 8, source: 'rapl' }, 'package-1': { joules: 4, source: 'rapl' } } },
    ]);
    let waited = 0;
    const idle = await calibrateIdle(m, 2000, async (ms) => void (waited = ms));
    assert.equal(waited, 2000);
    assert.deepEqual(idle, { status: 'measured', watts: 6, by_domain_watts: { 'package-0': 4, 'package-1': 2 }, window_ms: 2000, source: 'rapl' });
  });
  it('skipped with 0 ms; marginal meters are never calibrated; unusable windows say why', async () => {
    assert.equal((await calibrateIdle(scriptedMeter([]), 0, noWait)).status, 'skipped');
    assert.equal((await calibrateIdle(createEstimateMeter(), 1000, noWait)).status, 'marginal');
    assert.equal((await calibrateIdle(createModelMeter(), 1000, noWait)).status, 'marginal');
    const below = await calibrateIdle(scriptedMeter([{ joules: 0.1, window_ms: 50, below_floor: true }]), 50, noWait);
    assert.equal(below.status, 'unusable');
    assert.match(below.reason ?? '', /below the meter's floor/);
    const nothing = await calibrateIdle(scriptedMeter([{ joules: null }]), 50, noWait);
    assert.equal(nothing.status, 'unusable');
    assert.equal(nothing.watts, null);
  });
  it('net = gross − idle × wall; = gross when marginal; null when idle is unknown', () => {
    assert.equal(netJoules(30, { status: 'measured', watts: 10 }, 2000), 10);
    assert.equal(netJoules(30, { status: 'marginal', watts: null }, 2000), 30);
    assert.equal(netJoules(30, { status: 'skipped', watts: null }, 2000), null);
    assert.equal(netJoules(null, { status: 'measured', watts: 10 }, 2000), null);
    assert.equal(netJoules(15, { status: 'measured', watts: 10 }, 2000), null, 'below idle: null, not -5');
    assert.equal(netBelowIdle(15, { status: 'measured', watts: 10 }, 2000), true);
    assert.equal(netBelowIdle(30, { status: 'measured', watts: 10 }, 2000), false);
  });
});

describe('runner: idle window, whole-suite window, gross and net', () => {
  it('calibrates idle first, measures the scored passes as one window, and reports gross, net and the floor count', async () => {
    // Start order: idle, the warmup pass (2 cases), suite window, case 0, case 1.
    const m = scriptedMeter([
      { joules: 10, window_ms: 1000 }, // idle: 10 W
      { joules: 99, window_ms: 5 }, // warmup cases: recorded, never aggregated
      { joules: 99, window_ms: 5 },
      { joules: 30, window_ms: 2000 }, // whole suite
      { joules: 0.01, window_ms: 0.2, below_floor: true },
      { joules: 5, window_ms: 900 },
    ]);
    const out = await run({ suite: suiteOf(2), target: target(), meter: m, warmup: 1, idle_ms: 1000, idleWait: noWait });
    const r = out.report;
    assert.equal(m.starts, 6);
    // A below-floor case reading is noise: the headline comes from the suite window, never 5.01 J.
    assert.equal(r.total_joules, 30);
    assert.equal(r.energy_basis, 'suite_window');
    assert.equal(r.below_floor_count, 1);
    assert.equal(r.gross_joules, 30);
    assert.equal(r.gross_source, 'rapl');
    assert.equal(r.idle, 'measured');
    assert.equal(r.idle_watts, 10);
    assert.equal(r.suite_window_ms, 2000);
    assert.equal(r.net_joules, 10);
    assert.equal(r.net_joules_per_correct, 5);
    assert.equal(out.energy.gross_from, 'suite-window');
    assert.equal(out.energy.idle.window_ms, 1000);
  });

  it('gross below idle × wall: net is null (never negative), flagged net_below_idle, and the table says so', async () => {
    // Start order: idle (10 W), suite window (15 J over 2 s: below the 20 J idle would draw), case 0.
    const m = scriptedMeter([{ joules: 10, window_ms: 1000 }, { joules: 15, window_ms: 2000 }, { joules: 5, window_ms: 900 }]);
    const r = (await run({ suite: suiteOf(1), target: target(), meter: m, idle_ms: 1000, idleWait: noWait })).report;
    assert.equal(r.gross_joules, 15);
    assert.equal(r.net_joules, null);
    assert.equal(r.net_joules_per_correct, null);
    assert.equal(r.net_below_idle, true);
    assert.equal(Object.keys(r).indexOf('net_below_idle'), Object.keys(r).indexOf('suite_below_floor') + 1, 'last of the energy block');
    assert.match(renderReportTable(r), /net below idle.*gross < idle 10 W × 2000 ms/);
    assert.doesNotMatch(renderReportTable(r), /\bnull\b/, 'an absent figure reads n/a, never a literal null');
    const above = scriptedMeter([{ joules: 10, window_ms: 1000 }, { joules: 25, window_ms: 2000 }, { joules: 5, window_ms: 900 }]);
    const ok = (await run({ suite: suiteOf(1), target: target(), meter: above, idle_ms: 1000, idleWait: noWait })).report;
    assert.equal(ok.net_joules, 5);
    assert.equal(ok.net_below_idle, false);
    assert.doesNotMatch(renderReportTable(ok), /net below idle/);
  });

  it('a sequential run on the suite-window basis says so between passes, not "attribution shared"', async () => {
    // Start order: suite window (9 J), then two passes of one case, each below the floor.
    const m = scriptedMeter([{ joules: 9, window_ms: 2000 }, { joules: 0.001, below_floor: true }, { joules: 0.001, below_floor: true }]);
    const r = (await run({ suite: suiteOf(1), target: target(), meter: m, idle_ms: 0, repeats: 2 })).report;
    assert.equal(r.energy_basis, 'suite_window');
    const why = r.repeat_spread?.reasons.total_joules ?? '';
    assert.match(why, /suite-window reading/);
    assert.doesNotMatch(why, /shared/);
  });

  it('--no-idle (idle_ms 0): no idle window, net unknown', async () => {
    const m = scriptedMeter([{ joules: 7, window_ms: 100 }, { joules: 3 }]);
    const r = (await run({ suite: suiteOf(1), target: target(), meter: m, idle_ms: 0 })).report;
    assert.equal(m.starts, 2);
    assert.equal(r.idle, 'skipped');
    assert.equal(r.gross_joules, 7);
    assert.equal(r.net_joules, null);
  });

  it('model meter: no windows, gross = Σ target energy, net = gross, and the report is byte-identical run to run', async () => {
    const once = async (): Promise<string> => {
      // A fixed clock: latency is timing, not energy; this checks the energy fields add no volatility.
      const clock = { now: () => 0 };
      const out = await run({ suite: loadSuite('router'), target: createReferenceCascade(), meter: createModelMeter(), warmup: 1, clock });
      return prettyJson(out.report);
    };
    const a = await once();
    assert.equal(a, await once());
    const r = JSON.parse(a) as Record<string, unknown>;
    assert.equal(r.gross_joules, r.total_joules);
    assert.equal(r.net_joules, r.total_joules);
    assert.equal(r.gross_source, 'model');
    assert.equal(r.idle, 'marginal');
    assert.equal(r.suite_window_ms, null);
  });

  it("auto's fallback: the target's energy where it reports one, null where not (never an estimate of this process)", async () => {
    const auto = createAutoMeter({ hardware: [scriptedMeter([], { available: false })], estimate: createEstimateMeter(), fallback: 'model' });
    await auto.probe();
    const partial = await run({ suite: suiteOf(2), target: target({ c0: 2 }), meter: auto, idle_ms: 1000, idleWait: noWait });
    assert.deepEqual(partial.results.map((c) => [c.joules, c.energy_source]), [[2, 'model'], [null, 'none']]);
    assert.equal(partial.report.energy_source, 'model');
    assert.equal(partial.report.total_joules, null, 'a case without energy makes the total unknown');
    assert.equal(partial.report.energy_unknown_count, 1);
    assert.equal(partial.report.idle, 'marginal');
    assert.equal(partial.energy.gross_from, 'cases');
    assert.equal(partial.energy.suite, null, 'no window is opened on this process');

    const modelled = await run({ suite: suiteOf(2), target: target({ c0: 2, c1: 3 }), meter: auto });
    assert.equal(modelled.energy.gross_from, 'cases');
    assert.equal(modelled.report.gross_joules, 5);
    assert.equal(modelled.report.gross_source, 'model');
    // No meter window: the span is the wall clock's, the throughput's.
    assert.equal(modelled.report.suite_window_ms, modelled.report.throughput?.wall_ms);
  });
});

describe('aggregate: the new fields come after the seed fields, which keep their order', () => {
  it('seed fields first, energy fields last', async () => {
    const out = await run({ suite: suiteOf(1), target: target({ c0: 1 }), meter: createModelMeter() });
    const keys = Object.keys(out.report);
    assert.deepEqual(keys.slice(0, 8), [
      'case_count',
      'total_joules',
      'joules_per_correct',
      'accuracy_pct',
      'latency_p50_ms',
      'latency_p95_ms',
      'latency_p99_ms',
      'stage_distribution',
    ]);
    // The energy block follows `repeats`; later issues append their fields after it (concurrency, energy_attribution).
    assert.deepEqual(keys.slice(keys.indexOf('repeats') + 1, keys.indexOf('repeats') + 9), [
      'gross_joules',
      'gross_source',
      'net_joules',
      'net_joules_per_correct',
      'idle',
      'idle_watts',
      'suite_window_ms',
      'suite_below_floor',
    ]);
    // Without measured context (an old caller), a window source has unknown net.
    const bare = aggregate(
      out.results.map((c) => ({ ...c, energy_source: 'rapl' as const })),
      { suite: { name: 'x', version: '1', digest: 'd' }, target: 't', meter: 'm', warmup: 0, repeats: 1 },
    );
    assert.equal(bare.gross_joules, 1);
    assert.equal(bare.idle, 'skipped');
    assert.equal(bare.net_joules, null);
  });
});

describe('runner: the meter is probed first', () => {
  it('an unavailable meter stops the run before anything is recorded (E_METER)', async () => {
    await assert.rejects(run({ suite: suiteOf(1), target: target(), meter: scriptedMeter([], { available: false }) }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'E_METER');
      assert.match(e.message, /scripted meter told to be unavailable/);
      return true;
    });
  });
  it('auto settles before the header: the header and report name what it chose', async () => {
    const auto = createAutoMeter({ hardware: [scriptedMeter([], { available: false })], estimate: createEstimateMeter(), fallback: 'model' });
    const out = await run({ suite: suiteOf(1), target: target({ c0: 1 }), meter: auto });
    assert.equal(out.header.meter, 'auto(model)');
    assert.equal(out.report.meter, 'auto(model)');
    assert.equal(out.report.idle, 'marginal', 'the model fallback is never idle-calibrated');
  });
});
