import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { armSessionSpec, parsePlan } from '../../src/sweep/plan.js';
import { cli } from '../helpers/cli.js';

describe('sweep plans: cluster per plan and per arm', () => {
  it('a plan-level cluster reaches every arm that sets none; an arm or a matrix overrides it; the session spec carries it', () => {
    const p = parsePlan(
      {
        name: 'p',
        suites: ['mt'],
        cluster: 'subject',
        arms: [
          { name: 'a', kind: 'echo' },
          { name: 'b', kind: 'echo', cluster: 'question' },
          { name: 'c', kind: 'echo', matrix: { cluster: ['question', 'subject'] } },
        ],
      },
      'p.yaml',
    );
    assert.deepEqual(p.arms.map((a) => [a.name, a.cluster]), [['a', 'subject'], ['b', 'question'], ['c-cluster=question', 'question'], ['c-cluster=subject', 'subject']]);
    assert.equal(armSessionSpec(p.arms[1]!, 'mt', 'p.yaml').cluster, 'question');
    // Not passed to the target as an option.
    assert.equal(armSessionSpec(p.arms[1]!, 'mt', 'p.yaml').target_options, undefined);
    const none = parsePlan({ name: 'p', suites: ['mt'], arms: [{ name: 'a', kind: 'echo' }] }, 'p.yaml');
    assert.equal(armSessionSpec(none.arms[0]!, 'mt', 'p.yaml').cluster, undefined);
    assert.throws(() => parsePlan({ name: 'p', suites: ['mt'], cluster: 'planet', arms: [{ name: 'a', kind: 'echo' }] }, 'p.yaml'), /p\.yaml: cluster must be "question" or "subject"/);
    assert.throws(() => parsePlan({ name: 'p', suites: ['mt'], arms: [{ name: 'a', kind: 'echo', cluster: 'planet' }] }, 'p.yaml'), /p\.yaml: arms\.0\.cluster must be "question" or "subject"/);
  });

  describe('joulebench sweep (spawned)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-sweep-cluster-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    it("each arm's report resamples the clusters its plan asks for", async () => {
      const cases = ['algebra', 'biology', 'law'].flatMap((s, k) => Array.from({ length: 6 }, (_, i) => ({ id: `${s}-${i}`, prompt: `q${k}-${i}`, expected: k === 1 ? 'nope' : `q${k}-${i}`, dataset: s })));
      const suite = join(dir, 'subjects.json');
      writeFileSync(suite, JSON.stringify({ name: 'subjects', cases }));
      const plan = join(dir, 'plan.yaml');
      writeFileSync(plan, `name: clusters\nsuites: [${suite}]\ncluster: subject\narms:\n  - name: bysubject\n    kind: echo\n  - name: byquestion\n    kind: echo\n    cluster: question\n`);
      const out = join(dir, 'out');
      const r = await cli(['sweep', plan, '--out-dir', out, '--no-idle', '--no-history', '--bootstrap', '200']);
      assert.equal(r.code, 0, r.stderr);
      const state = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as { runs: { arm: string; report: string; results: string }[] };
      const unit = (arm: string) => {
        const e = state.runs.find((x) => x.arm === arm)!;
        const path = isAbsolute(e.report) ? e.report : join(out, e.report);
        return (JSON.parse(readFileSync(path, 'utf8')) as { ci: { unit: string } }).ci.unit;
      };
      assert.equal(unit('bysubject'), 'subject');
      assert.equal(unit('byquestion'), 'question');
      const e = state.runs.find((x) => x.arm === 'byquestion')!;
      const header = JSON.parse(readFileSync(isAbsolute(e.results) ? e.results : join(out, e.results), 'utf8').split('\n')[0]!) as { cluster?: string };
      assert.equal(header.cluster, 'question');
    });
  });
});
