import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summarizeSolvers } from '../../src/code/aggregate.js';
import type { Datapoint } from '../../src/code/oracle.js';

function dp(over: Partial<Datapoint> & Pick<Datapoint, 'task' | 'solver'>): Datapoint {
  return {
    rollout: 0,
    valid: true,
    invalid_reason: null,
    resolved: false,
    baseline: { exit_code: 1, timed_out: false, wall_ms: 1 },
    solver_run: { exit_code: 0, signal: null, timed_out: false, wall_ms: 100, stragglers_killed: 0, error: null, output_tail: null },
    grade: { exit_code: 1, timed_out: false, wall_ms: 1 },
    tests_modified: [],
    escapes: [],
    joules: 10,
    net_joules: null,
    energy_source: 'rapl',
    below_floor: false,
    window_ms: 100,
    cost_usd: 0.5,
    prompt_tokens: null,
    completion_tokens: null,
    usage_parsed_from: null,
    sandbox: 'none',
    workdir: null,
    error: null,
    ...over,
  };
}

describe('summarizeSolvers', () => {
  test('best-of-N: resolved when any rollout resolves; energy, time and $ summed over all rollouts', () => {
    const rows = summarizeSolvers([
      dp({ task: 't1', solver: 'a', rollout: 0, resolved: false }),
      dp({ task: 't1', solver: 'a', rollout: 1, resolved: true }),
      dp({ task: 't2', solver: 'a', rollout: 0, resolved: false, solver_run: null, joules: 2 }),
      dp({ task: 't2', solver: 'a', rollout: 1, resolved: false }),
    ]);
    const a = rows[0]!;
    assert.equal(a.resolved_count, 1);
    assert.equal(a.resolution_pct, 50);
    assert.equal(a.total_joules, 32);
    assert.equal(a.joules_per_resolved, 32);
    assert.equal(a.total_usd, 2);
    assert.equal(a.usd_per_resolved, 2);
    // Per-task wall summed over rollouts: t1 = 200, t2 = 0 + 100 → median 150.
    assert.equal(a.median_wall_ms, 150);
  });

  test('invalid datapoints are counted and excluded; a task with none valid leaves the denominator', () => {
    const [a] = summarizeSolvers([
      dp({ task: 't1', solver: 'a', resolved: true }),
      dp({ task: 't2', solver: 'a', valid: false, invalid_reason: 'already passes', solver_run: null, joules: null, cost_usd: null }),
    ]);
    assert.equal(a!.invalid_count, 1);
    assert.equal(a!.valid_task_count, 1);
    assert.equal(a!.resolution_pct, 100);
    assert.equal(a!.total_joules, 10);
  });

  test('unknown energy or cost anywhere makes the total null, never a partial sum or 0', () => {
    const [a] = summarizeSolvers([dp({ task: 't1', solver: 'a', resolved: true }), dp({ task: 't2', solver: 'a', joules: null, cost_usd: null, energy_source: 'none' })]);
    assert.equal(a!.total_joules, null);
    assert.equal(a!.joules_per_resolved, null);
    assert.equal(a!.energy_missing_count, 1);
    assert.equal(a!.total_usd, null);
    assert.equal(a!.energy_source, 'mixed');
  });

  test('net energy is used when every datapoint has it; below-floor windows are flagged', () => {
    const [a] = summarizeSolvers([dp({ task: 't1', solver: 'a', resolved: true, net_joules: 4, below_floor: true })]);
    assert.equal(a!.energy_basis, 'net');
    assert.equal(a!.total_joules, 4);
    assert.equal(a!.below_floor, true);
    assert.equal(a!.below_floor_count, 1);
  });

  test('escapes fail and are counted; frontier marks on both planes', () => {
    const rows = summarizeSolvers(
      [
        dp({ task: 't1', solver: 'ceiling', resolved: true, joules: 50, cost_usd: 0 }),
        dp({ task: 't2', solver: 'ceiling', resolved: true, joules: 50, cost_usd: 0 }),
        dp({ task: 't1', solver: 'frugal', resolved: true, joules: 1, cost_usd: 1 }),
        dp({ task: 't2', solver: 'frugal', resolved: false, joules: 1, cost_usd: 1 }),
        dp({ task: 't1', solver: 'floor', joules: 1, cost_usd: 0, escapes: ['added /x'] }),
        dp({ task: 't2', solver: 'floor', joules: 1, cost_usd: 0 }),
      ],
      ['floor', 'frugal', 'ceiling'],
    );
    assert.deepEqual(rows.map((r) => r.solver), ['floor', 'frugal', 'ceiling']);
    const by = Object.fromEntries(rows.map((r) => [r.solver, r]));
    assert.equal(by.floor!.escape_count, 1);
    // ceiling: 100 %, 50 J/resolved; frugal: 50 %, 2 J/resolved → both on the energy frontier.
    assert.deepEqual(rows.map((r) => r.pareto_energy), [false, true, true]);
    // ceiling: 100 %, $0/resolved dominates frugal ($2/resolved).
    assert.deepEqual(rows.map((r) => r.pareto_usd), [false, false, true]);
  });
});
