import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { killMidRun } from '../helpers/kill-mid-run.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { jb } from './helpers.js';
import { timelessReport } from '../helpers/timeless.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-resume-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');

// 30 router cases × (1 warmup + 120 scored passes): long enough that the kill lands mid-run.
const REPEAT = '120';
const TOTAL = 30 * 121;
const runArgs = (results: string, out: string): string[] => ['run', '-q', '--no-history', '--suite', 'router', '--repeat', REPEAT, '--results', results, '--out', out];

it('a run killed with SIGKILL resumes to the report of an uninterrupted run, nothing re-run or duplicated', async () => {
  const results = join(dir, 'killed.results.jsonl');
  const signal = await killMidRun(runArgs(results, join(dir, 'killed.json')), results, 60_000, home);
  assert.equal(signal, 'SIGKILL', 'the run finished before the kill landed; raise REPEAT');
  const before = readResultsFile(results);
  assert.ok(before.results.length > 0 && before.results.length < TOTAL, `killed mid-run (${before.results.length} of ${TOTAL})`);
  assert.equal(existsSync(join(dir, 'killed.json')), false, 'no report from a killed run');

  const resumed = jb([...runArgs(results, join(dir, 'resumed.json')), '--resume'], { home });
  assert.equal(resumed.code, 0, resumed.stderr);

  const full = jb(runArgs(join(dir, 'full.results.jsonl'), join(dir, 'full.json')), { home });
  assert.equal(full.code, 0, full.stderr);
  assert.deepEqual(timelessReport(join(dir, 'resumed.json')), timelessReport(join(dir, 'full.json')));

  const after = readResultsFile(results);
  assert.equal(after.torn_bytes, 0);
  const keys = after.results.map((r) => `${r.phase}:${r.pass}:${r.index}`);
  assert.equal(keys.length, TOTAL);
  assert.equal(new Set(keys).size, TOTAL, 'no (phase, pass, index) twice');
  // The lines written before the kill are untouched: the resumed run appended after them.
  assert.deepEqual(after.results.slice(0, before.results.length), before.results);
  const receipt = JSON.parse(readFileSync(join(dir, 'resumed.receipt.json'), 'utf8')) as { resumed: { finished_before: number } };
  assert.equal(receipt.resumed.finished_before, before.results.length);
});

it('refuses to resume a results file of another suite or config, with the reason (exit 2)', () => {
  const results = join(dir, 'small.results.jsonl');
  assert.equal(jb(['run', '-q', '--no-history', '--suite', 'router', '--results', results, '--out', join(dir, 'small.json')], { home }).code, 0);
  const other = jb(['run', '-q', '--no-history', '--suite', 'mt', '--resume', results, '--out', join(dir, 'x.json')], { home });
  assert.equal(other.code, 2);
  assert.match(other.stderr, /^joulebench: .*small\.results\.jsonl: cannot resume: it was written for suite "router"/m);
  const config = jb(['run', '-q', '--no-history', '--suite', 'router', '--warmup', '0', '--resume', results, '--out', join(dir, 'x.json')], { home });
  assert.equal(config.code, 2);
  assert.match(config.stderr, /cannot resume: .*config.*warmup 1 → 0/);
  const nothing = jb(['run', '-q', '--no-history', '--resume'], { home });
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /--resume needs the results file/);
});

it('--resume refuses a case line the interrupted run could not have had (a pass past its header, an index past the suite), naming the line, and leaves the file as it was', () => {
  const whole = join(dir, 'range.results.jsonl');
  assert.equal(jb(['run', '-q', '--no-history', '--suite', 'router', '--results', whole, '--out', join(dir, 'range.json')], { home }).code, 0);
  // As a kill leaves it: the header, the warmup pass, the first 10 scored cases.
  const lines = readFileSync(whole, 'utf8').trimEnd().split('\n').slice(0, 1 + 30 + 10);
  const at = lines.findIndex((l) => l.startsWith('{"record":"case","phase":"scored","pass":0,"index":0,'));
  assert.ok(at > 0);
  const edits: [string, string, string, RegExp][] = [
    ['pass-past', '"pass":0,"index":0,', '"pass":1,"index":0,', new RegExp(`line ${at + 1}: a scored case line of pass 1, index 0, which the run could not have had \\(its header says repeats 1: passes 0 to 0\\)`)],
    ['index-past', '"pass":0,"index":0,', '"pass":0,"index":30,', new RegExp(`line ${at + 1}: a scored case line of pass 0, index 30, which the run could not have had \\(its header says cases 30: index 0 to 29\\)`)],
    // A file written before the header said how many cases: --resume knows the suite it runs.
    ['index-past-old', '"pass":0,"index":0,', '"pass":0,"index":30,', new RegExp(`line ${at + 1}: a scored case line of pass 0, index 30, which this suite could not have had \\(it has 30 cases: index 0 to 29\\)`)],
  ];
  assert.match(lines[0]!, /,"cases":30,/);
  for (const [name, from, to, message] of edits) {
    const path = join(dir, `${name}.results.jsonl`);
    const edited = lines.map((l, i) => (i === at ? l.replace(from, to) : i === 0 && name.endsWith('-old') ? l.replace(',"cases":30', '') : l)).join('\n') + '\n';
    writeFileSync(path, edited);
    const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--resume', path, '--out', join(dir, `${name}.json`)], { home });
    assert.equal(r.code, 2, `${name}: exit ${r.code}\n${r.stderr}`);
    assert.match(r.stderr, message, name);
    assert.ok(r.stderr.includes(path), r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(readFileSync(path, 'utf8'), edited, `${name}: nothing appended or cut`);
    assert.equal(existsSync(join(dir, `${name}.json`)), false);
  }
  // Another suite's run: that is the reason given, not the index its file has past this suite's cases.
  const other = jb(['run', '-q', '--no-history', '--suite', 'mt', '--resume', join(dir, 'index-past-old.results.jsonl'), '--out', join(dir, 'x.json')], { home });
  assert.equal(other.code, 2);
  assert.match(other.stderr, /cannot resume: it was written for suite "router"/);
});

it("report, compare and frontier of a file that is not one whole run say so on stderr (no end line, a cut-off last line); a finished run's say nothing; a case twice is refused", () => {
  const whole = join(dir, 'whole.results.jsonl');
  assert.equal(jb(['run', '-q', '--no-history', '--suite', 'router', '--results', whole, '--out', join(dir, 'whole.json')], { home }).code, 0);
  const text = readFileSync(whole, 'utf8');
  const lines = text.trimEnd().split('\n');
  // As a kill leaves them: the end line never written; or, besides, the last line cut before its newline.
  const noEnd = join(dir, 'no-end.results.jsonl');
  writeFileSync(noEnd, lines.filter((l) => !l.includes('"record":"end"')).join('\n') + '\n');
  const cut = join(dir, 'cut.results.jsonl');
  writeFileSync(cut, text.slice(0, text.length - 1));

  const ok = jb(['report', '--json', whole], { home });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stderr, '');
  const full = JSON.parse(ok.stdout) as { case_count: number };

  const partial = jb(['report', '--json', noEnd], { home });
  assert.equal(partial.code, 0, partial.stderr);
  assert.equal(JSON.parse(partial.stdout).case_count, full.case_count, 'every case line was written before the end line');
  assert.match(partial.stderr, /^joulebench: warning: .*no-end\.results\.jsonl: the run did not finish \(the file has no end line\): this report covers the 30 scored case\(s\) written; `joulebench run --resume`/m);
  assert.equal(partial.stderr.trim().split('\n').length, 1, partial.stderr);

  const torn = jb(['report', cut], { home });
  assert.equal(torn.code, 0, torn.stderr);
  assert.match(torn.stderr, /cut\.results\.jsonl: the run did not finish/);
  const endBytes = Buffer.byteLength(lines.at(-1)!);
  assert.match(torn.stderr, new RegExp(`cut\\.results\\.jsonl: its last ${endBytes} byte\\(s\\) have no newline .* and were left out`));

  // Two runs' files joined: every case twice, which no joulebench writer produces.
  const joined = join(dir, 'joined.results.jsonl');
  writeFileSync(joined, text + text);
  const twice = jb(['report', '--json', joined], { home });
  assert.equal(twice.code, 2, twice.stderr);
  const firstCase = lines.findIndex((l) => l.includes('"record":"case"')) + 1;
  assert.match(twice.stderr, new RegExp(`joined\\.results\\.jsonl:${firstCase} and .*joined\\.results\\.jsonl:${lines.length + firstCase}: two case lines for`));
  assert.equal(twice.stderr.trim().split('\n').length, 1, twice.stderr);

  const cmp = jb(['compare', whole, noEnd, '-q'], { home });
  assert.equal(cmp.code, 0, cmp.stderr);
  assert.match(cmp.stderr, /no-end\.results\.jsonl: the run did not finish/);
  assert.doesNotMatch(cmp.stderr, /whole\.results\.jsonl/);
  const frontier = jb(['frontier', whole, noEnd], { home });
  assert.equal(frontier.code, 0, frontier.stderr);
  assert.match(frontier.stderr, /no-end\.results\.jsonl: the run did not finish/);
});
