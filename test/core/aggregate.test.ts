import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { CTX, result } from '../helpers/results.js';

describe('aggregate', () => {
  it('keeps the seed fields first, with their names, in order', () => {
    const r = aggregate([result()], CTX);
    assert.deepEqual(Object.keys(r).slice(0, 8), [
      'case_count',
      'total_joules',
      'joules_per_correct',
      'accuracy_pct',
      'latency_p50_ms',
      'latency_p95_ms',
      'latency_p99_ms',
      'stage_distribution',
    ]);
    assert.deepEqual(Object.keys(r.stage_distribution), ['cache', 'kv', 'graph', 'neural']);
  });

  it('excludes unscored cases from accuracy but counts their energy and latency', () => {
    const r = aggregate(
      [
        result({ passed: true, joules: 2, latency_ms: 10 }),
        result({ passed: false, joules: 2, latency_ms: 20 }),
        result({ passed: null, expected: null, joules: 6, latency_ms: 30 }),
      ],
      CTX,
    );
    assert.equal(r.case_count, 3);
    assert.equal(r.scored_count, 2);
    assert.equal(r.correct_count, 1);
    assert.equal(r.accuracy_pct, 50);
    assert.equal(r.total_joules, 10);
    assert.equal(r.joules_per_correct, 10);
    assert.equal(r.latency_p99_ms, 30);
  });

  it('writes null (not Infinity, not 0) for joules_per_correct when nothing is correct', () => {
    const r = aggregate([result({ passed: false }), result({ passed: false })], CTX);
    assert.equal(r.joules_per_correct, null);
    assert.equal(r.accuracy_pct, 0);
    assert.match(JSON.stringify(r), /"joules_per_correct":null/);
  });

  it('has null accuracy when no case is scored, and null energy when none was measured', () => {
    const r = aggregate([result({ passed: null, expected: null, joules: null, energy_source: 'none' })], CTX);
    assert.equal(r.accuracy_pct, null);
    assert.equal(r.total_joules, null);
    assert.equal(r.energy_source, 'none');
  });

  it('makes the total unknown (not a partial sum) while any case has no energy figure, and counts them', () => {
    const r = aggregate([result({ joules: 3 }), result({ joules: null, energy_source: 'none', dataset: 'e' })], CTX);
    assert.equal(r.total_joules, null);
    assert.equal(r.joules_per_correct, null);
    assert.equal(r.energy_unknown_count, 1);
    assert.equal(r.by_dataset.d!.total_joules, 3);
    assert.equal(r.by_dataset.e!.total_joules, null);
    assert.equal(r.by_dataset.e!.energy_unknown_count, 1);
  });

  it('has no case-sum energy total when concurrent cases were metered by overlapping windows', () => {
    const rs = [result({ joules: 2, energy_source: 'rapl' }), result({ joules: 2, energy_source: 'rapl' })];
    const shared = aggregate(rs, { ...CTX, concurrency: 4 });
    assert.equal(shared.total_joules, null, 'overlapping windows must not be summed');
    assert.equal(shared.joules_per_correct, null);
    assert.equal(shared.energy_attribution, 'shared');
    assert.equal(aggregate(rs, CTX).total_joules, 4);
    // Energy the target reports for its own case does not overlap: it still sums.
    const model = aggregate([result({ joules: 2 }), result({ joules: 3 })], { ...CTX, concurrency: 4 });
    assert.equal(model.total_joules, 5);
  });

  it('sums no overlapping windows when other arms shared the hardware (shared), per dataset too, as a results file rebuilt with its header does', () => {
    const rs = [result({ joules: 2, energy_source: 'rapl' }), result({ joules: 2, energy_source: 'rapl' })];
    const r = aggregate(rs, { ...CTX, shared: true });
    assert.equal(r.energy_attribution, 'shared');
    assert.equal(r.total_joules, null);
    assert.equal(r.by_dataset.d!.total_joules, null, 'windows that saw other arms\' work are no dataset total either');
  });

  it('has no $ or token total (not a partial sum) while some cases lack them, and counts those cases', () => {
    const r = aggregate(
      [result({ cost_usd: 0.01, prompt_tokens: 5, completion_tokens: 1 }), result({ cost_usd: null, prompt_tokens: null, completion_tokens: null })],
      CTX,
    );
    assert.equal(r.total_usd, null);
    assert.equal(r.usd_per_correct, null);
    assert.equal(r.cost_unknown_count, 1);
    assert.equal(r.prompt_tokens, null);
    assert.equal(r.usage_unknown_count, 1);
    const none = aggregate([result()], CTX);
    assert.equal(none.cost_unknown_count, 0, 'nothing reported cost: not applicable, not unknown');
  });

  it('divides by correct × weight', () => {
    const r = aggregate([result({ passed: true, weight: 2, joules: 8 }), result({ passed: false, weight: 2, joules: 2 })], CTX);
    assert.equal(r.weighted_correct, 2);
    assert.equal(r.joules_per_correct, 5);
  });

  it('ignores warmup results', () => {
    const r = aggregate([result({ phase: 'warmup', joules: 100, passed: false }), result({ joules: 1 })], CTX);
    assert.equal(r.case_count, 1);
    assert.equal(r.total_joules, 1);
    assert.equal(r.accuracy_pct, 100);
  });

  it('truncates latency to whole ms like the seed u64, nearest-rank', () => {
    const r = aggregate([0.4, 0.9, 1.7, 2.2].map((latency_ms) => result({ latency_ms })), CTX);
    assert.equal(r.latency_p50_ms, 0);
    assert.equal(r.latency_p95_ms, 2);
  });

  it('counts stages, errors, below-floor readings, and labels mixed sources', () => {
    const r = aggregate(
      [
        result({ stage: 'cache', energy_source: 'model' }),
        result({ stage: 'kv', energy_source: 'rapl', below_floor: true }),
        result({ stage: null, error: { code: 'E_TARGET', message: 'boom' }, passed: false, joules: null, energy_source: 'none' }),
      ],
      CTX,
    );
    assert.equal(r.stage_distribution.cache, 1);
    assert.equal(r.stage_distribution.kv, 1);
    assert.equal(r.error_count, 1);
    assert.equal(r.below_floor_count, 1);
    assert.equal(r.energy_source, 'mixed');
    assert.deepEqual(r.energy_sources, { model: 1, rapl: 1 });
  });

  it('sums stage energy from traces, including stages that passed', () => {
    const trace = [
      { stage: 'cache', hit: false, energy_uj: 1000 },
      { stage: 'kv', hit: true, energy_uj: 5000 },
    ];
    const r = aggregate([result({ stage: 'kv', trace, joules: 0.006 })], CTX);
    assert.equal(r.stage_joules.cache, 0.001);
    assert.equal(r.stage_joules.kv, 0.005);
    assert.equal(r.stage_joules.neural, null);
    assert.equal(r.stage_joules_source, 'model', 'a trace is the cascade cost model, whatever meter measured the case');
  });

  it('reports $ per correct only when cost is known', () => {
    assert.equal(aggregate([result()], CTX).usd_per_correct, null);
    const r = aggregate([result({ cost_usd: 0.002 }), result({ cost_usd: 0.002, passed: false })], CTX);
    assert.equal(r.total_usd, 0.004);
    assert.equal(r.usd_per_correct, 0.004);
  });

  it('is deterministic: same input, same JSON', () => {
    const rs = [result({ latency_ms: 3, joules: 0.1 }), result({ latency_ms: 1, joules: 0.2, passed: false })];
    assert.equal(JSON.stringify(aggregate(rs, CTX)), JSON.stringify(aggregate(rs, CTX)));
  });
});
