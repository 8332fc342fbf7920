import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jb, jbAsync } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-reports-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');
const p = (f: string): string => join(dir, f);

describe('history, report, frontier and compare from the CLI', () => {
  before(async () => {
    // Two runs finishing at the same time, into one history: both must land.
    const [a, b] = await Promise.all([
      jbAsync(['run', '-q', '--suite', 'router', '-o', p('a.json')], { home }),
      jbAsync(['run', '-q', '--suite', 'router', '--warmup', '0', '-o', p('b.json')], { home }),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const c = jb(['run', '-q', '--suite', 'mt', '-o', p('c.json')], { home });
    assert.equal(c.code, 0, c.stderr);
    assert.equal(jb(['run', '-q', '--no-history', '--suite', 'mt', '-o', p('d.json')], { home }).code, 0);
  });

  it('history lists every recorded run, newest first, and --no-history skips', () => {
    const r = jb(['history', '--json'], { home });
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as { id: number; suite: string; suite_digest: string; target: string; accuracy_pct: number; joules_per_correct: number; energy_source: string; finished_utc: string }[];
    assert.equal(rows.length, 3);
    assert.deepEqual(rows.map((x) => x.suite), ['mt', 'router', 'router']);
    assert.ok(rows[0]!.id > rows[1]!.id);
    const c = JSON.parse(readFileSync(p('c.json'), 'utf8')) as { joules_per_correct: number; suite: { digest: string } };
    assert.equal(rows[0]!.joules_per_correct, c.joules_per_correct);
    assert.equal(rows[0]!.suite_digest, c.suite.digest);
    assert.equal(rows[0]!.energy_source, 'model');
    assert.match(rows[0]!.finished_utc, /^\d{4}-\d\d-\d\dT.*Z$/);
    const table = jb(['history'], { home });
    assert.match(table.stdout, /#3 +suite +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +mt +[0-9a-f]{8} +cascade:reference\+echo +17\.6 % +100\.17 J +model/);
  });

  it('compare accepts run ids, and refuses different suite digests unless --force', () => {
    const same = jb(['compare', '-b', '1', '-c', '#2', '-q'], { home });
    assert.equal(same.code, 0, same.stderr);
    assert.ok('joules_per_correct_pct' in JSON.parse(same.stdout));
    const diff = jb(['compare', '1', '3'], { home });
    assert.equal(diff.code, 2);
    assert.match(diff.stderr, /history #1 and history #3 ran different cases \(suite digests .*\): not comparable \(pass --force/);
    const forced = jb(['compare', '1', '3', '--force', '-q'], { home });
    assert.equal(forced.code, 0);
    assert.match(forced.stderr, /warning: .*both runs' figures shown \(--force\), with no change, interval, p-value or verdict between them \(withheld\)/);
    assert.equal((JSON.parse(forced.stdout) as { accuracy_pp_delta: unknown }).accuracy_pp_delta, null);
    const files = jb(['compare', p('a.json'), p('c.json')], { home });
    assert.equal(files.code, 2);
    const missing = jb(['compare', '1', '99'], { home });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /99: no such file, and no run 99/);
  });

  it('--fail-on exits 1 naming the crossed threshold, 0 when none is, 2 when malformed', () => {
    // b (no warmup: a cold cache) spends more per correct answer than a.
    const gate = jb(['compare', p('a.json'), p('b.json'), '-q', '--fail-on', 'joules_per_correct_pct>5,accuracy_pp_delta<-1'], { home });
    assert.equal(gate.code, 1, gate.stderr);
    assert.match(gate.stderr, /gate failed: joules_per_correct_pct>5: joules_per_correct_pct is \d+/);
    assert.doesNotMatch(gate.stderr, /accuracy_pp_delta<-1:/);
    const pass = jb(['compare', p('b.json'), p('a.json'), '--fail-on', 'joules_per_correct_pct>5,accuracy_pp_delta<-1'], { home });
    assert.equal(pass.code, 0, pass.stderr);
    assert.match(pass.stderr, /gate passed/);
    const bad = jb(['compare', p('a.json'), p('b.json'), '--fail-on', 'joules_per_correct_pct>>5'], { home });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--fail-on: cannot read "joules_per_correct_pct>>5"/);
  });

  it('compare --md renders a Markdown table with the gate verdict', () => {
    const r = jb(['compare', p('a.json'), p('b.json'), '--md', '--fail-on', 'joules_per_correct_pct>5'], { home });
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^### joulebench compare: a → b$/m);
    // Paired runs (same digest, results beside the reports): each change with its interval and verdict.
    assert.match(r.stdout, /^\| J \/ correct \| [\d.]+ J \| [\d.]+ J \| \+[\d.]+ % \| lower \| \[\+[\d.]+ %, \+[\d.]+ %\] \| worse \|$/m);
    assert.match(r.stdout, /\*\*Gate: failed\*\*/);
  });

  it('report --md renders headline, stages and receipt with energy source labels', () => {
    const r = jb(['report', p('a.json'), '--md'], { home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\| J \/ correct \| [\d.]+ J `model` \|/m);
    assert.match(r.stdout, /^\| cache \| \d+ \| [\d.]+ % \|/m);
    assert.match(r.stdout, /<sub>receipt: \d{4}-.*Z → .*Z · joulebench /);
    const fromId = jb(['report', 'last', '--json'], { home });
    assert.equal(fromId.code, 0);
    assert.deepEqual(JSON.parse(fromId.stdout), JSON.parse(readFileSync(p('c.json'), 'utf8')));
    const fromResults = jb(['report', p('c.results.jsonl'), '--json'], { home });
    assert.deepEqual(JSON.parse(fromResults.stdout), JSON.parse(readFileSync(p('c.json'), 'utf8')), 'a results file aggregates to its report');
  });

  it('frontier marks the Pareto-optimal arms, as a table and as JSON', () => {
    type F = { frontiers: Record<string, { frontier: string[]; verdicts: { id: string; dominated_by: string[]; excluded: string | null }[] }> };
    const j = jb(['frontier', p('a.json'), p('b.json'), '--json'], { home });
    assert.equal(j.code, 0, j.stderr);
    const f = JSON.parse(j.stdout) as F;
    assert.deepEqual(f.frontiers.energy!.frontier, ['a'], 'the warm cascade is as accurate and cheaper');
    assert.deepEqual(f.frontiers.energy!.verdicts.find((v) => v.id === 'b')!.dominated_by, ['a']);
    assert.deepEqual(f.frontiers.cost!.frontier, ['a', 'b'], 'the reference cascade bills $0 (known): a tie, both optimal');
    // c ran the mt suite: its accuracy is over other questions, so it is withheld with that reason, and
    // a and b (the comparable majority) are still ranked.
    const mixed = JSON.parse(jb(['frontier', p('a.json'), p('b.json'), p('c.json'), '--json'], { home }).stdout) as F;
    assert.deepEqual(mixed.frontiers.energy!.frontier, ['a']);
    assert.match(mixed.frontiers.energy!.verdicts.find((v) => v.id === 'c')!.excluded ?? '', /answered different questions/);
    const mixedText = jb(['frontier', p('a.json'), p('b.json'), p('c.json')], { home }).stdout;
    assert.match(mixedText, /c: not placed, not comparable: answered different questions/);
    assert.doesNotMatch(mixedText, /no arm has both figures/);
    const t = jb(['frontier', p('a.json'), p('b.json'), '1'], { home });
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /accuracy ↑ vs J\/correct ↓: /);
    assert.match(t.stdout, /b: dominated by /);
  });

  it('a file that is not a report is exit 2 naming the file', () => {
    writeFileSync(p('junk.json'), '{"hello": 1}');
    const r = jb(['frontier', p('junk.json')], { home });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /junk\.json: not a joulebench report \(case_count: is missing\)/);
    writeFileSync(p('infer.json'), '{"format": "joulebench-infer/1", "arms": []}');
    const inf = jb(['report', p('infer.json'), '--md'], { home });
    assert.equal(inf.code, 2);
    // Read as what its format says (report takes infer run files), and refused by that reader, naming the key.
    assert.match(inf.stderr, /infer\.json: not a joulebench infer run file \(prompt_sha256: /);
  });
});
