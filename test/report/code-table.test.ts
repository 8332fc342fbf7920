import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeSolvers } from '../../src/code/aggregate.js';
import type { Datapoint } from '../../src/code/oracle.js';
import type { CodeResults } from '../../src/code/results.js';
import { codeArms } from '../../src/report/arms.js';
import { renderCodeTable } from '../../src/report/code-table.js';
import { buildHtmlModel } from '../../src/report/html/model.js';

function dp(solver: string, task: string, resolved: boolean, joules: number, cost: number | null, below_floor: boolean): Datapoint {
  return {
    task, solver, rollout: 0, valid: true, invalid_reason: null, resolved,
    baseline: { exit_code: 1, timed_out: false, wall_ms: 1 },
    solver_run: { exit_code: 0, signal: null, timed_out: false, wall_ms: 12_000, stragglers_killed: 0, error: null, output_tail: null },
    grade: { exit_code: resolved ? 0 : 1, timed_out: false, wall_ms: 1 },
    tests_modified: [], escapes: [], joules, net_joules: null, energy_source: 'rapl', below_floor, window_ms: 12_000,
    cost_usd: cost, prompt_tokens: null, completion_tokens: null, usage_parsed_from: null, sandbox: 'bwrap', workdir: null, error: null,
  };
}

test('the frontier table marks below-floor energy with ~ and the Pareto-optimal solvers with E and $', () => {
  process.env.NO_COLOR = '1';
  const datapoints = [
    dp('reference', 't1', true, 0.002, 0, true),
    dp('reference', 't2', true, 0.002, 0, true),
    dp('agent', 't1', true, 500, 0.1, false),
    dp('agent', 't2', false, 300, 0.1, false),
    dp('frugal', 't1', true, 100, null, false),
    dp('frugal', 't2', false, 100, null, false),
  ];
  const r: CodeResults = {
    format: 'joulebench-code-results/1',
    suite: { name: 's', source: 's', digest: 'sha256:abc', tasks: ['t1', 't2'] },
    config: { solvers: [], rollouts: 1, sandbox: { kind: 'bwrap' }, meter: { id: 'rapl', source: 'rapl', floor_ms: 1 }, idle: null, timeout_s: null, default_timeout_s: 900, scrubbed_env: [] },
    solvers: summarizeSolvers(datapoints, ['reference', 'agent', 'frugal']),
    datapoints,
  };
  const out = renderCodeTable(r);
  const line = (name: string) => out.split('\n').find((l) => l.trimStart().startsWith(name + ' ')) ?? '';
  assert.match(line('reference'), /~2\.00 mJ\s+~4\.00 mJ/);
  assert.match(line('reference'), /E \$$/);
  assert.match(line('agent'), /800\.00 J/);
  assert.match(line('agent'), /12\.0 s/);
  assert.match(line('agent'), /·$/, 'the ceiling dominates the agent on both planes');
  assert.match(line('frugal'), /200\.00 J\s+12\.0 s\s+n\/a\s+n\/a/, 'unknown cost shows n/a, never $0');
  assert.doesNotMatch(line('agent'), /~/);
  assert.match(out, /~ below the meter's floor/);
});

test("a solver's wall p95 (the arm's and the page's) and its median are over one population: each task's rollouts summed", () => {
  // Two rollouts a task: the per-task sums are 24 s and 26 s, one rollout never more than 13 s.
  const walls: [string, number][] = [['t1', 12_000], ['t1', 12_000], ['t2', 13_000], ['t2', 13_000]];
  const datapoints = walls.map(([task, wall_ms], i) => {
    const d = dp('agent', task, true, 1, 0, false);
    return { ...d, rollout: i % 2, solver_run: { ...d.solver_run!, wall_ms } };
  });
  const r: CodeResults = {
    format: 'joulebench-code-results/1',
    suite: { name: 's', source: 's', digest: 'sha256:abc', tasks: ['t1', 't2'] },
    config: { solvers: [], rollouts: 2, sandbox: { kind: 'bwrap' }, meter: { id: 'rapl', source: 'rapl', floor_ms: 1 }, idle: null, timeout_s: null, default_timeout_s: 900, scrubbed_env: [] },
    solvers: summarizeSolvers(datapoints, ['agent']),
    datapoints,
  };
  const [s] = r.solvers;
  const [arm] = codeArms('f', r);
  assert.equal(s!.median_wall_ms, 25_000);
  assert.equal(arm!.latency_p95_ms, 26_000);
  const [row] = buildHtmlModel([{ kind: 'code', label: 'f', origin: 'f.json', results: r, run_id: null }], 'T').code[0]!.solvers;
  assert.ok(row!.wall_p95_ms! >= row!.median_wall_ms!, `p95 ${row!.wall_p95_ms} below median ${row!.median_wall_ms}`);
});
