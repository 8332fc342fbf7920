import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, it } from 'node:test';
import { killMidRun } from '../helpers/kill-mid-run.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { BIN, jb, jbAsync } from './helpers.js';
import { timelessReport } from '../helpers/timeless.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');

/** The report without its timings (throughput too: the two runs' wall times differ). */
const timeless = (path: string) => timelessReport(path, ['throughput_rps', 'throughput']);

/** Writes `n` lines to `path` a megabyte at a time (a large suite without holding it as one string). */
function writeLines(path: string, n: number, line: (i: number) => string): void {
  const fd = openSync(path, 'w');
  let chunk = '';
  for (let i = 0; i < n; i++) {
    chunk += line(i) + '\n';
    if (chunk.length > 1 << 20) {
      writeSync(fd, chunk);
      chunk = '';
    }
  }
  writeSync(fd, chunk);
  closeSync(fd);
}

function caseLines(n: number, prompt = (i: number) => `what is ${i}?`): string[] {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ id: `c${i}`, prompt: prompt(i), expected: i % 3 === 0 ? `what is ${i}` : `nope ${i}`, tags: i % 2 ? ['odd'] : ['even'], ...(i % 5 === 0 ? { weight: 2 } : {}) }),
  );
}

it('a JSONL suite (streamed) gives the report and digest of the same cases as a JSON suite (in memory), --filter, --limit and --concurrency included', () => {
  const lines = caseLines(700);
  mkdirSync(join(dir, 'a'));
  mkdirSync(join(dir, 'b'));
  writeFileSync(join(dir, 'a', 's.jsonl'), lines.join('\n') + '\n');
  writeFileSync(join(dir, 'b', 's.json'), `[${lines.join(',\n')}]`);
  for (const extra of [[], ['--filter', 'odd', '--limit', '300', '--concurrency', '4']]) {
    const args = (suite: string, out: string) => ['run', '-q', '--no-history', '--target', 'echo', '--warmup', '1', '--repeat', '2', '--suite', suite, '--out', out, ...extra];
    const a = jb(args(join(dir, 'a', 's.jsonl'), join(dir, 'a', 'r.json')), { home });
    assert.equal(a.code, 0, a.stderr);
    const b = jb(args(join(dir, 'b', 's.json'), join(dir, 'b', 'r.json')), { home });
    assert.equal(b.code, 0, b.stderr);
    assert.deepEqual(timeless(join(dir, 'a', 'r.json')), timeless(join(dir, 'b', 'r.json')));
    const ha = readResultsFile(join(dir, 'a', 'r.results.jsonl'));
    const hb = readResultsFile(join(dir, 'b', 'r.results.jsonl'));
    assert.equal(ha.header?.suite_digest, hb.header?.suite_digest);
    assert.equal(ha.results.length, hb.results.length);
    assert.deepEqual(
      ha.results.map((r) => [r.phase, r.pass, r.index, r.case_id, r.response, r.passed]),
      hb.results.map((r) => [r.phase, r.pass, r.index, r.case_id, r.response, r.passed]),
    );
  }
});

it('a JSONL suite with a bad last line is refused before a single request is sent: one line, exit 2, no results file', async () => {
  const s = await startFakeOpenAI(() => ({ kind: 'plain', text: 'A' }));
  try {
    const d = join(dir, 'badlast');
    mkdirSync(d);
    writeFileSync(join(d, 'bad.jsonl'), caseLines(2000).join('\n') + '\n{"id": "last", "prompt": "p", "expected": "e", "extra": 1}\n');
    const r = await jbAsync(['run', '--no-history', '--target', 'openai', '--endpoint', s.url, '--model', 'm', '--suite', 'bad.jsonl', '--results', 'r.jsonl'], { cwd: d, home });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim(), 'joulebench: suite bad.jsonl: case 2000 (id "last"): extra: unknown key');
    assert.equal(s.seen.length, 0, 'no request before the whole suite was checked');
    assert.equal(existsSync(join(d, 'r.jsonl')), false);
  } finally {
    await s.close();
  }
});

// 40 cases × (1 warmup + 150 scored passes) on the cascade (whose cache `--resume` restores): the suite
// file is read again for every pass, and the kill lands mid-run.
const N = 40;
const REPEAT = 150;
const TOTAL = N * (1 + REPEAT);

it('a streamed suite killed with SIGKILL resumes to the report of an uninterrupted run, nothing re-run or duplicated', async () => {
  const d = join(dir, 'resume');
  mkdirSync(d);
  const suite = join(d, 'r.jsonl');
  writeFileSync(suite, caseLines(N, (i) => `what is ${i % 7}?`).join('\n') + '\n');
  const runArgs = (results: string, out: string): string[] => ['run', '-q', '--no-history', '--suite', suite, '--repeat', String(REPEAT), '--results', results, '--out', out];
  const results = join(d, 'killed.results.jsonl');
  const signal = await killMidRun(runArgs(results, join(d, 'killed.json')), results, 60_000, home);
  assert.equal(signal, 'SIGKILL', 'the run finished before the kill landed; raise REPEAT');
  const before = readResultsFile(results);
  assert.ok(before.results.length > 0 && before.results.length < TOTAL, `killed mid-run (${before.results.length} of ${TOTAL})`);

  const resumed = jb([...runArgs(results, join(d, 'resumed.json')), '--resume'], { home });
  assert.equal(resumed.code, 0, resumed.stderr);
  const full = jb(runArgs(join(d, 'full.results.jsonl'), join(d, 'full.json')), { home });
  assert.equal(full.code, 0, full.stderr);
  assert.deepEqual(timeless(join(d, 'resumed.json')), timeless(join(d, 'full.json')));

  const afterResume = readResultsFile(results);
  const keys = afterResume.results.map((r) => `${r.phase}:${r.pass}:${r.index}`);
  assert.equal(keys.length, TOTAL);
  assert.equal(new Set(keys).size, TOTAL, 'no (phase, pass, index) twice');
  assert.deepEqual(afterResume.results.slice(0, before.results.length), before.results);
  const receipt = JSON.parse(readFileSync(join(d, 'resumed.receipt.json'), 'utf8')) as { resumed: { finished_before: number } };
  assert.equal(receipt.resumed.finished_before, before.results.length);
});

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

/** Peak RSS (MB) of a child node process running `code` (an ES module body; `dist` is the built library). */
function peakRssMb(code: string): number {
  const body = `const dist = ${JSON.stringify(DIST)};\n${code}\nprocess.stdout.write('RSS ' + process.resourceUsage().maxRSS);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', body], { encoding: 'utf8', env: { ...process.env, JOULEBENCH_HOME: home } });
  assert.equal(r.status, 0, r.stderr);
  const m = /RSS (\d+)/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return Number(m[1]) / 1024;
}

it('running a 200,000-case JSONL suite takes less memory than merely holding it did', (t) => {
  const d = join(dir, 'mem');
  mkdirSync(d);
  const suite = join(d, 'big.jsonl');
  const pad = 'x'.repeat(200);
  writeLines(suite, 200_000, (i) => `{"id":"c${i}","prompt":"what is ${i}? ${pad}","expected":null}`);
  // What the suite cost before it streamed: the in-memory loader (whole file as one string, then every case).
  const held = peakRssMb(`const { loadSuiteFile } = await import(dist + 'suites/loader.js'); loadSuiteFile(${JSON.stringify(suite)});`);
  // The whole run, streamed: suite checked, then read again and run against echo, results written.
  const ran = peakRssMb(
    `const { runSession } = await import(dist + 'session/run-session.js');
     const r = await runSession({ suite: ${JSON.stringify(suite)}, target: 'echo', warmup: 0, bootstrap: 0, idle_ms: 0, history: false, results: ${JSON.stringify(join(d, 'big.results.jsonl'))}, receipt: ${JSON.stringify(join(d, 'big.receipt.json'))} });
     if (r.report.case_count !== 200000) throw new Error('ran ' + r.report.case_count);`,
  );
  t.diagnostic(`peak RSS: run streamed ${ran.toFixed(0)} MB, suite held in memory ${held.toFixed(0)} MB`);
  assert.ok(ran < held * 0.75, `peak RSS: run streamed ${ran.toFixed(0)} MB, suite held in memory ${held.toFixed(0)} MB`);
});

it("Ctrl-C while a million-case JSONL suite is still being checked ends the run at once, not when the check pass ends (nothing is written yet)", async () => {
  const suite = join(dir, 'million.jsonl');
  writeLines(suite, 1_000_000, (i) => `{"id":"c${i}","prompt":"what is ${i}?","expected":"what is ${i}?"}`);
  const results = join(dir, 'million.results.jsonl');
  const child = spawn(process.execPath, [BIN, 'run', '-q', '--no-history', '--target', 'echo', '--suite', suite, '--results', results, '--out', join(dir, 'million.json')], {
    env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home },
    stdio: 'ignore',
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) => child.on('exit', (code, signal) => ok({ code, signal })));
  // The check pass reads, validates and digests every line (about 5 s here); this lands inside it.
  await new Promise((ok) => setTimeout(ok, 1500));
  const sent = performance.now();
  child.kill('SIGINT');
  const end = await exited;
  const waited_ms = performance.now() - sent;
  assert.ok(end.signal === 'SIGINT' || end.code === 130, JSON.stringify(end));
  assert.ok(waited_ms < 1500, `the process went on for ${Math.round(waited_ms)} ms after Ctrl-C`);
  assert.equal(existsSync(results), false);
  assert.equal(existsSync(join(dir, 'million.json')), false);
});
