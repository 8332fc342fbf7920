import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-'));

describe('joulebench run (spawned)', () => {
  it('runs the embedded default and writes byte-identical reports twice', async () => {
    const a = join(dir, 'a.json');
    const b = join(dir, 'b.json');
    // Wall-clock latency is measured: the reference cascade answers in microseconds (whole ms: 0), but
    // on a loaded machine the OS can preempt one case for over a millisecond. Such a pair may differ in
    // the latency fields only — and only when the results file shows a case that really took ≥ 1 ms —
    // and is run again. Every other byte must match on every attempt.
    let r1 = await cli(['run', '--suite', 'all', '--out', a]);
    for (let attempt = 1; ; attempt++) {
      const r2 = await cli(['run', '--suite', 'all', '--out', b]);
      assert.equal(r1.code, 0, r1.stderr);
      assert.equal(r2.code, 0, r2.stderr);
      const [x, y] = [readFileSync(a, 'utf8'), readFileSync(b, 'utf8')];
      if (x === y) break;
      // The latency intervals in `ci` are measured figures too.
      const strip = (t: string) =>
        t.replace(/"latency_p(50|95|99)_ms": \{[^}]*\}/g, '"latency_p$1_ms": CI').replace(/"latency_p(50|95|99)_ms": (\d+|null)/g, '"latency_p$1_ms": L').replace(/"latency_p(50|95|99)_ms": "[^"]*"/g, '"latency_p$1_ms": R');
      assert.equal(strip(x), strip(y), 'reports differ beyond measured latency');
      const slow = [join(dir, 'a.results.jsonl'), join(dir, 'b.results.jsonl')].some((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .some((l) => /"phase":"scored"/.test(l) && Number(/"latency_ms":([\d.]+)/.exec(l)?.[1] ?? 0) >= 1),
      );
      assert.ok(slow, 'latency fields differ although no case took 1 ms or more');
      assert.ok(attempt < 5, 'preempted five times in a row');
      r1 = await cli(['run', '--suite', 'all', '--out', a]);
    }
    const report = JSON.parse(readFileSync(a, 'utf8'));
    assert.equal(report.case_count, 50);
    assert.deepEqual(report.stage_distribution, { cache: 17, kv: 7, graph: 11, neural: 15 });
    assert.equal(report.energy_source, 'model');
    // The table goes to stdout when the JSON goes to a file; results and receipt sit next to the report.
    assert.match(r1.stdout, /J \/ correct/);
    assert.match(r1.stdout, /\[model\]/);
    assert.ok(existsSync(join(dir, 'a.results.jsonl')));
    const receipt = JSON.parse(readFileSync(join(dir, 'a.receipt.json'), 'utf8'));
    assert.match(receipt.started_utc, /Z$/);
    assert.equal(receipt.suite.digest, report.suite.digest);
  });

  it('prints the JSON on stdout and the table on stderr without --out; no progress bar when not a terminal', async () => {
    const r = await cli(['run', '--suite', 'router', '--results', join(dir, 'r.jsonl'), '--receipt', join(dir, 'r.receipt.json')]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(report.stage_distribution, { cache: 6, kv: 7, graph: 8, neural: 9 });
    assert.match(r.stderr, /accuracy/);
    assert.doesNotMatch(r.stderr, /█|░/);
    const lines = readFileSync(join(dir, 'r.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1 + 60 + 2); // header + warmup pass + scored pass + run_measures + end
    assert.deepEqual(JSON.parse(lines.at(-1)!), { record: 'end', scored: 30 });
  });

  it('--quiet prints only the JSON', async () => {
    const r = await cli(['run', '--suite', 'mt', '--quiet', '--warmup', '0', '--results', join(dir, 'q.jsonl'), '--receipt', join(dir, 'q.r.json')]);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.equal(JSON.parse(r.stdout).warmup, 0);
  });

  it('rejects a bad suite file with one line naming the file, case and key, exit 2, before running', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'name: x\ncases:\n  - id: one\n    prompt: hi\n    expected: ok\n  - id: two\n    prompt: 3\n    expected: ok\n');
    const results = join(dir, 'never.jsonl');
    const r = await cli(['run', '--suite', bad, '--results', results]);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /bad\.yaml: case 1 \(id "two"\): prompt: /);
    assert.doesNotMatch(r.stderr, /\bat .*\.js:\d+/); // no stack trace
    assert.ok(!existsSync(results), 'nothing ran');
  });

  it('refuses to overwrite an interrupted run\'s results unless told, and replaces a finished one', async () => {
    const results = join(dir, 'i.jsonl');
    const done = await cli(['run', '-s', 'router', '-q', '--results', results, '--receipt', join(dir, 'i.r.json')]);
    assert.equal(done.code, 0, done.stderr);
    const full = readFileSync(results, 'utf8');
    writeFileSync(results, full.split('\n').slice(0, 20).join('\n') + '\n'); // as a killed run leaves it
    const again = await cli(['run', '-s', 'router', '-q', '--results', results, '--receipt', join(dir, 'i.r.json')]);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /holds an interrupted run \(19 finished cases\): continue it with --resume/);
    assert.equal(readFileSync(results, 'utf8').split('\n').length, 21, 'nothing was lost');
    const forced = await cli(['run', '-s', 'router', '-q', '--overwrite', '--results', results, '--receipt', join(dir, 'i.r.json')]);
    assert.equal(forced.code, 0, forced.stderr);
    const other = join(dir, 'notes.txt');
    writeFileSync(other, 'my notes\n');
    const clobber = await cli(['run', '-s', 'router', '-q', '--results', other]);
    assert.equal(clobber.code, 2);
    assert.equal(readFileSync(other, 'utf8'), 'my notes\n');
  });

  it('rejects bad usage with exit 2', async () => {
    for (const args of [['run', '--warmup', '-1'], ['run', '--target', 'nope'], ['run', '--suite', 'nope'], ['bogus']]) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\bat .*\.js:\d+/);
    }
  });

  it('prints help and version with exit 0', async () => {
    const h = await cli(['--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /run/);
    assert.match(h.stdout, /compare/);
    const v = await cli(['--version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+/);
  });
});
