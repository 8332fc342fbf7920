import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jb } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-maxunits-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string): string => join(dir, f);
const home = p('home');

interface Ci {
  resamples: number;
  analytic?: { units: number; bootstrap_max_units: number; reason: string };
  latency_p95_ms: { method: string } | null;
  joules_per_correct: { method: string } | null;
  reasons: Record<string, string>;
}

describe('run --bootstrap-max-units', () => {
  it('records the limit in the header; `report` of the results file is the run\'s own report, byte for byte', () => {
    // The reference cascade's latencies are a few µs: identical values (a degenerate interval) or not,
    // as the machine's timing falls; J/correct always varies, so it shows the method the limit chose.
    for (const [name, limit, methods] of [
      ['five', '5', ['woodruff', 'delta']],
      ['inf', 'inf', ['bootstrap', 'bootstrap']],
      ['zero', '0', ['woodruff', 'delta']],
    ] as const) {
      const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--repeat', '2', '--bootstrap', '200', '--bootstrap-max-units', limit, '-o', p(`${name}.json`)], { home });
      assert.equal(r.code, 0, r.stderr);
      const header = JSON.parse(readFileSync(p(`${name}.results.jsonl`), 'utf8').split('\n')[0]!) as Record<string, unknown>;
      assert.equal(header.bootstrap_max_units, limit === 'inf' ? 'inf' : Number(limit));
      const own = readFileSync(p(`${name}.json`), 'utf8');
      const rebuilt = jb(['report', '--json', p(`${name}.results.jsonl`)], { home });
      assert.equal(rebuilt.code, 0, rebuilt.stderr);
      assert.equal(rebuilt.stdout, own, `--bootstrap-max-units ${limit}`);
      const ci = (JSON.parse(own) as { ci: Ci }).ci;
      assert.ok([methods[0], 'degenerate'].includes(ci.latency_p95_ms?.method ?? ''), `${name}: latency ${ci.latency_p95_ms?.method}`);
      assert.equal(ci.joules_per_correct?.method ?? ci.reasons.joules_per_correct, methods[1]);
      assert.equal(ci.resamples, 200);
      if (methods[1] === 'bootstrap') assert.equal(ci.analytic, undefined);
      else {
        assert.equal(ci.analytic!.bootstrap_max_units, Number(limit));
        assert.match(ci.analytic!.reason, /no resamples were drawn/);
      }
    }
    // The default limit is not written: the header is as before.
    const d = jb(['run', '-q', '--no-history', '--suite', 'router', '--bootstrap', '50', '--bootstrap-max-units', '20000', '-o', p('default.json')], { home });
    assert.equal(d.code, 0, d.stderr);
    assert.ok(!readFileSync(p('default.results.jsonl'), 'utf8').split('\n')[0]!.includes('bootstrap_max_units'));
  });

  it('the terminal table names the large-sample method and why', () => {
    const r = jb(['report', p('five.results.jsonl')], { home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout + r.stderr, /delta method over cases \(\d+ cases > 5: no bootstrap\)/);
    assert.match(r.stdout + r.stderr, /latency p95\s+(degenerate \(all 0 ms\)\s+identical values|.*Woodruff over cases)/);
  });

  it('bad values: one line naming the flag or the header key, exit 2', () => {
    for (const bad of ['-1', '1.5', 'infinity']) {
      const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--bootstrap-max-units', bad, '-o', p('bad.json')], { home });
      assert.equal(r.code, 2, `${bad}: ${r.stderr}`);
      assert.match(r.stderr, /--bootstrap-max-units/);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    for (const cmd of [['compare', 'a.json', 'b.json'], ['sweep', 'plan.yaml']]) {
      const r = jb([...cmd, '--bootstrap-max-units', 'x'], { home, cwd: dir });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--bootstrap-max-units/);
    }
    const lines = readFileSync(p('five.results.jsonl'), 'utf8').split('\n');
    for (const value of [-1, 2.5, 'none']) {
      const path = p('bad-header.results.jsonl');
      writeFileSync(path, [JSON.stringify({ ...JSON.parse(lines[0]!), bootstrap_max_units: value }), ...lines.slice(1)].join('\n'));
      const r = jb(['report', '--json', path], { home });
      assert.equal(r.code, 2, `${String(value)}: ${r.stderr}`);
      assert.match(r.stderr, /line 1: header key bootstrap_max_units must be a whole number >= 0 or "inf"/);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    }
  });

  it('sweep: every arm\'s header records the limit, and the comparison against the baseline switches too', () => {
    const plan = p('plan.yaml');
    writeFileSync(plan, 'name: mu\nsuites: [router]\nbaseline: a\narms:\n  - name: a\n    kind: cascade\n  - name: b\n    kind: cascade\n');
    const r = jb(['sweep', plan, '--out-dir', p('sweep'), '--no-idle', '--no-history', '--bootstrap', '50', '--bootstrap-max-units', '3', '-q'], { home });
    assert.equal(r.code, 0, r.stderr);
    for (const arm of ['a', 'b']) {
      const header = JSON.parse(readFileSync(join(p('sweep'), arm, 'router.results.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown>;
      assert.deepEqual([header.bootstrap, header.bootstrap_max_units], [50, 3]);
      assert.ok((JSON.parse(readFileSync(join(p('sweep'), arm, 'router.json'), 'utf8')) as { ci: Ci }).ci.analytic);
    }
    const vs = (JSON.parse(r.stdout) as { suites: { vs_baseline: { latency_p95_ms_delta_ci95: { method: string } | null }[] }[] }).suites[0]!.vs_baseline[0]!;
    // Latencies of a few µs: a paired difference of identical values is said as such (degenerate).
    assert.ok(['paired-woodruff', 'degenerate'].includes(vs.latency_p95_ms_delta_ci95?.method ?? ''), vs.latency_p95_ms_delta_ci95?.method);
  });

  it('compare: the paired statistics switch above the limit and say so', () => {
    // Two runs of the same suite (the first test's): each case pairs with itself in the other run.
    const [a, b] = [p('five.results.jsonl'), p('inf.results.jsonl')];
    const c = jb(['compare', '-q', a, b, '--bootstrap', '100', '--bootstrap-max-units', '3'], { home });
    assert.equal(c.code, 0, c.stderr);
    const out = JSON.parse(c.stdout) as { paired: { analytic?: { bootstrap_max_units: number }; latency_p95_ms_delta: { ci95: { method: string } | null } } };
    assert.equal(out.paired.analytic?.bootstrap_max_units, 3);
    assert.ok(['paired-woodruff', 'degenerate'].includes(out.paired.latency_p95_ms_delta.ci95?.method ?? ''));
    const md = jb(['compare', '--md', a, b, '--bootstrap', '100', '--bootstrap-max-units', '3'], { home });
    assert.match(md.stdout, /large-sample paired intervals \(delta method, Woodruff\) over cases: \d+ paired cases are more than the bootstrap's limit of 3/);
    const inf = jb(['compare', '-q', a, b, '--bootstrap', '100', '--bootstrap-max-units', 'inf'], { home });
    const paired = (JSON.parse(inf.stdout) as { paired: { analytic?: unknown; latency_p95_ms_delta: { ci95: { method: string } | null } } }).paired;
    assert.equal(paired.analytic, undefined);
    assert.ok(['paired-bootstrap', 'degenerate'].includes(paired.latency_p95_ms_delta.ci95?.method ?? ''));
  });
});
