import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-passk-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function dp(solver: string, task: string, rollout: number, resolved: boolean, joules: number, usd: number) {
  return {
    task, solver, rollout, valid: true, invalid_reason: null, resolved,
    baseline: { exit_code: 1, timed_out: false, wall_ms: 1 },
    solver_run: { exit_code: 0, signal: null, timed_out: false, wall_ms: 1000, stragglers_killed: 0, error: null, output_tail: null },
    grade: { exit_code: resolved ? 0 : 1, timed_out: false, wall_ms: 1 },
    tests_modified: [], escapes: [], joules, net_joules: null, energy_source: 'rapl', below_floor: false, window_ms: 1000,
    cost_usd: usd, prompt_tokens: null, completion_tokens: null, usage_parsed_from: null, sandbox: 'none', workdir: null, error: null,
  };
}

// Solver a: t1 resolved on rollouts 0 and 2 of 3, t2 never (an expensive failure), t3 on every rollout.
const outcomes: Record<string, boolean[]> = { t1: [true, false, true], t2: [false, false, false], t3: [true, true, true] };
const joules: Record<string, number[]> = { t1: [10, 20, 30], t2: [100, 100, 100], t3: [5, 5, 5] };
const datapoints = Object.keys(outcomes).flatMap((t) => outcomes[t]!.map((r, i) => dp('a', t, i, r, joules[t]![i]!, 0.01)));
const results = {
  format: 'joulebench-code-results/1',
  suite: { name: 'passk', source: 'test', digest: 'sha256:' + 'a'.repeat(64), tasks: ['t1', 't2', 't3'] },
  config: { solvers: [{ id: 'a' }], rollouts: 3, sandbox: { kind: 'none' }, meter: { id: 'rapl', source: 'rapl', floor_ms: 1 }, idle: null, timeout_s: null, default_timeout_s: 900, scrubbed_env: [] },
  solvers: [],
  datapoints,
};
const file = join(dir, 'passk.json');
writeFileSync(file, JSON.stringify(results));

/** Shares of the k-subsets of each task's rollouts with any / all resolved, and the mean energy of a k-subset. */
function enumerate(k: number): { any: number; all: number; joules: number } {
  let any = 0;
  let all = 0;
  let j = 0;
  for (const t of Object.keys(outcomes)) {
    const subsets: number[][] = [];
    for (let m = 0; m < 8; m++) {
      const s = [0, 1, 2].filter((i) => m & (1 << i));
      if (s.length === k) subsets.push(s);
    }
    any += subsets.filter((s) => s.some((i) => outcomes[t]![i])).length / subsets.length;
    all += subsets.filter((s) => s.every((i) => outcomes[t]![i])).length / subsets.length;
    j += subsets.reduce((a, s) => a + s.reduce((b, i) => b + joules[t]![i]!, 0), 0) / subsets.length;
  }
  return { any, all, joules: j };
}

describe('code: pass@k, pass^k, expensive failures and resolution under a budget', () => {
  test('--report --json: per k, the rates and J per expected resolved match enumeration of the rollouts', async () => {
    const r = await cli(['code', '--report', file, '--json', '--energy-budget', '50']);
    assert.equal(r.code, 0, r.stderr);
    const s = JSON.parse(r.stdout).solvers[0];
    assert.equal(s.pass_at_k.length, 3);
    for (const p of s.pass_at_k) {
      const e = enumerate(p.k);
      assert.ok(Math.abs(p.pass_at_k_pct - (e.any * 100) / 3) < 1e-5, `pass@${p.k}`);
      assert.ok(Math.abs(p.pass_hat_k_pct - (e.all * 100) / 3) < 1e-5, `pass^${p.k}`);
      assert.ok(Math.abs(p.joules_per_resolved - e.joules / e.any) < 1e-6, `J/resolved@${p.k}`);
    }
    // At k = N the curve's J/resolved is the best-of-N figure.
    assert.ok(Math.abs(s.pass_at_k[2].joules_per_resolved - s.joules_per_resolved) < 1e-6);
    assert.equal(s.unresolved_task_count, 1);
    assert.equal(s.unresolved_joules, 300);
    assert.ok(Math.abs(s.unresolved_usd - 0.03) < 1e-9);
    // Budget 50 J: t1's resolved rollouts (10, 30 J) give (40 + 20)/50 over 3 rollouts; t3's three 5 J give 3 × 45/50 over 3.
    const expected = (((40 + 20) / 50 / 3 + (3 * 45) / 50 / 3) / 3) * 100;
    assert.ok(Math.abs(s.resolution_under_budget_pct - expected) < 1e-4, `${s.resolution_under_budget_pct} vs ${expected}`);
  });

  test('the table, the frontier and the HTML page carry the curve', async () => {
    const t = await cli(['code', '--report', file]);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /pass@k\s+pass\^k\s+J\/resolved@k/);
    assert.match(t.stdout, /expensive failures: a: 1 task\(s\) never resolved took 300\.0+ J/);
    const f = await cli(['frontier', file, '--json']);
    assert.equal(f.code, 0, f.stderr);
    const curves = JSON.parse(f.stdout).code_curves;
    assert.equal(curves['passk · a'].pass_at_k.length, 3);
    const ft = await cli(['frontier', file]);
    assert.match(ft.stdout, /passk · a: k=1 /);
    const html = join(dir, 'p.html');
    const h = await cli(['report', file, '--html', html]);
    assert.equal(h.code, 0, h.stderr);
    const page = readFileSync(html, 'utf8');
    assert.match(page, /<figure class="pass-at-k"><svg/);
    assert.match(page, /<g data-solver="a"><polyline/);
    assert.match(page, /Expensive failures/);
  });

  test('a bad budget is one line naming the flag, exit 2', async () => {
    const r = await cli(['code', '--report', file, '--energy-budget', '0']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--energy-budget.*must be a number > 0/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
