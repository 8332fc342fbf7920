import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';

describe('report --cluster: a report rebuilt from a results file, clustered as run --cluster would', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-report-cluster-'));
  let suite: string;
  before(async () => {
    // Three subjects of ten cases: the echo target answers the prompt, so "expected" decides who is right.
    const cases = ['algebra', 'biology', 'law'].flatMap((s, k) =>
      Array.from({ length: 10 }, (_, i) => ({ id: `${s}-${i}`, prompt: `q${k}-${i}`, expected: k === 1 || (k === 2 && i < 5) ? 'nope' : `q${k}-${i}`, dataset: s })),
    );
    suite = join(dir, 'subjects.json');
    writeFileSync(suite, JSON.stringify({ name: 'subjects', cases }));
    for (const [name, extra] of [['plain', []], ['subject', ['--cluster', 'subject']]] as const) {
      const r = await cli(['run', '--no-history', '--suite', suite, '--target', 'echo', ...extra, '-o', join(dir, `${name}.json`), '-q']);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a run made without --cluster, reported with --cluster subject, has the intervals of the run made with it', async () => {
    const made = JSON.parse(readFileSync(join(dir, 'subject.json'), 'utf8')) as { ci: { unit: string; clusters: number } };
    assert.equal(made.ci.unit, 'subject');
    const plain = JSON.parse(readFileSync(join(dir, 'plain.json'), 'utf8')) as { ci: { unit: string } };
    assert.equal(plain.ci.unit, 'case');
    for (const input of ['plain.results.jsonl', 'plain.json']) {
      const r = await cli(['report', join(dir, input), '--cluster', 'subject', '--json']);
      assert.equal(r.code, 0, r.stderr);
      const rebuilt = JSON.parse(r.stdout) as { ci: unknown };
      assert.deepEqual(rebuilt.ci, made.ci, input);
    }
    // The table says it too.
    const table = await cli(['report', join(dir, 'plain.results.jsonl'), '--cluster', 'subject']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /over 3 subjects \(clustered\)/);
    // And a clustered run can be reported by question instead.
    const q = await cli(['report', join(dir, 'subject.results.jsonl'), '--cluster', 'question', '--json']);
    assert.equal(q.code, 0, q.stderr);
    assert.equal((JSON.parse(q.stdout) as { ci: { unit: string } }).ci.unit, 'question');
  });

  it('refuses a report with no results file beside it, and a bad cluster, in one line', async () => {
    const alone = join(dir, 'alone', 'r.json');
    rmSync(join(dir, 'alone'), { recursive: true, force: true });
    mkdirSync(join(dir, 'alone'));
    copyFileSync(join(dir, 'plain.json'), alone);
    const r = await cli(['report', alone, '--cluster', 'subject', '--json']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /r\.json: --cluster rebuilds the report from its results file, and .*r\.results\.jsonl does not exist/);
    const bad = await cli(['report', join(dir, 'plain.results.jsonl'), '--cluster', 'planet']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--cluster/);
  });
});
