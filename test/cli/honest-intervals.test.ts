import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-honest-ci-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string): string => join(dir, f);
// Three cases the echo backend answers correctly, each modelled at the same 50 J.
const suite = p('three.json');
writeFileSync(suite, JSON.stringify({ name: 'three', cases: ['x', 'y', 'z'].map((v) => ({ id: v, prompt: v, expected: v })) }));

describe('honest intervals', () => {
  it('an interval over identical values is degenerate in the JSON and the table, never "95 %"', async () => {
    const r = await cli(['run', '--no-history', '-t', 'echo', '--suite', suite, '-o', p('r.json')]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(p('r.json'), 'utf8')) as { joules_per_correct: number; ci: { joules_per_correct: { low: number; high: number; method: string } } };
    const i = report.ci.joules_per_correct;
    assert.equal(i.low, i.high);
    assert.equal(i.method, 'degenerate');
    const row = r.stdout.split('\n').find((l) => l.trimStart().startsWith('J / correct') && l.includes('degenerate'));
    assert.ok(row, r.stdout);
    assert.doesNotMatch(row!, /\[\S+ J, \S+ J\]/);
    assert.doesNotMatch(r.stdout, /95 % interval/);
  });

  it('no delta, p-value or verdict between arms (or runs) whose suite digests differ: withheld with the reason', async () => {
    // A retry policy is part of what was asked (it is in the suite digest): arm b asked different questions.
    const server = await startFakeOpenAI((req) => ({ kind: 'plain', text: String((req.body.messages as { content: string }[])[0]?.content ?? '') }));
    after(() => server.close());
    const plan = p('plan.yaml');
    const arm = (name: string, extra = '') => `  - name: ${name}\n    kind: openai\n    endpoint: ${server.url}\n    model: m\n    meter: model\n${extra}`;
    writeFileSync(plan, `name: d\nsuites: [${JSON.stringify(suite)}]\nbaseline: a\narms:\n${arm('a')}${arm('b', '    params: { retry: { max_attempts: 2 } }\n')}`);
    const r = await cli(['sweep', plan, '--out-dir', p('sweep'), '--no-history', '--no-idle', '--bootstrap', '200']);
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(r.stdout) as { suites: { arms: { suite_digest: string }[]; vs_baseline: Record<string, unknown>[] }[] };
    const [a, b] = c.suites[0]!.arms;
    assert.notEqual(a!.suite_digest, b!.suite_digest);
    const v = c.suites[0]!.vs_baseline[0]!;
    for (const k of ['accuracy_pp_delta', 'accuracy_p_value', 'joules_per_correct_pct', 'latency_p95_pct', 'accuracy_pp_delta_ci95', 'latency_p95_ms_delta_ci95']) assert.equal(v[k], null, k);
    for (const k of ['accuracy_verdict', 'joules_per_correct_verdict', 'latency_p95_verdict']) assert.equal(v[k], 'withheld', k);
    assert.equal(v.withheld, true);
    assert.match(String(v.reason), /different suite digests/);
    const row = r.stderr.split('\n').find((l) => /^\s*b\s/.test(l) && l.includes('withheld'));
    assert.ok(row, r.stderr);
    assert.doesNotMatch(row!, /[+-]\d/, 'no signed change printed');
    assert.match(r.stderr, /b: different suite digests/);

    // compare --force shows both runs' figures, and withholds the changes.
    const f = await cli(['compare', '--force', '-q', join(p('sweep'), 'a', 'three.json'), join(p('sweep'), 'b', 'three.json')]);
    assert.equal(f.code, 0, f.stderr);
    const cmp = JSON.parse(f.stdout) as Record<string, unknown>;
    for (const k of ['accuracy_pp_delta', 'joules_per_correct_pct', 'latency_p95_pct', 'accuracy_p_value']) assert.equal(cmp[k], null, k);
    assert.equal(cmp.withheld, true);
  });
});
