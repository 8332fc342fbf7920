import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, it } from 'node:test';
import { killMidRun } from '../helpers/kill-mid-run.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { csvLine, generatedRows, writeLines } from '../helpers/mmlu-fixtures.js';
import { jb, jbAsync } from './helpers.js';
import { timelessReport } from '../helpers/timeless.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-mmlu-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');

/** The report without its timings (throughput and MMLU's average latency too). */
function timeless(path: string): Record<string, unknown> {
  const r = timelessReport(path, ['throughput_rps', 'throughput']);
  delete (r.measurements as Record<string, unknown>)['mmlu.avg_latency_ms'];
  return r;
}

it('MMLU data with a bad last row is refused before a single request is sent: one line, exit 2, no results file', async () => {
  const s = await startFakeOpenAI(() => ({ kind: 'plain', text: 'A' }));
  try {
    const d = join(dir, 'badlast');
    mkdirSync(d);
    const body = generatedRows(3000).map(csvLine).join(''); // some questions span lines (quoted newlines)
    writeFileSync(join(d, 'physics_test.csv'), body + 'Last?,a,b,c,d,E\n');
    const lastLine = body.split('\n').length;
    const r = await jbAsync(['run', '--no-history', '--target', 'openai', '--endpoint', s.url, '--model', 'm', '--suite', 'mmlu', '--data', 'physics_test.csv', '--results', 'r.jsonl'], { cwd: d, home });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim(), `joulebench: mmlu physics_test.csv: line ${lastLine}: answer must be an index 0-3 or a letter A-D, got "E"`);
    assert.equal(s.seen.length, 0, 'no request before the whole file was checked');
    assert.equal(existsSync(join(d, 'r.jsonl')), false);
  } finally {
    await s.close();
  }
});

// 40 questions × (1 warmup + 150 scored passes) on the cascade (whose cache `--resume` restores): the
// data is read again for every pass, and the kill lands mid-run.
const N = 40;
const REPEAT = 150;
const TOTAL = N * (1 + REPEAT);

it('a run of streamed MMLU data killed with SIGKILL resumes to the report (measurements block included) of an uninterrupted run', async () => {
  const d = join(dir, 'resume');
  mkdirSync(d);
  const data = join(d, 'toy_test.csv');
  writeFileSync(data, generatedRows(N, 1, 7).map(csvLine).join(''));
  const runArgs = (results: string, out: string): string[] => ['run', '-q', '--no-history', '--suite', 'mmlu', '--data', data, '--repeat', String(REPEAT), '--results', results, '--out', out];
  const results = join(d, 'killed.results.jsonl');
  const signal = await killMidRun(runArgs(results, join(d, 'killed.json')), results, 200_000, home);
  assert.equal(signal, 'SIGKILL', 'the run finished before the kill landed; raise REPEAT');
  const before = readResultsFile(results);
  assert.ok(before.results.length > 0 && before.results.length < TOTAL, `killed mid-run (${before.results.length} of ${TOTAL})`);

  const resumed = jb([...runArgs(results, join(d, 'resumed.json')), '--resume'], { home });
  assert.equal(resumed.code, 0, resumed.stderr);
  const full = jb(runArgs(join(d, 'full.results.jsonl'), join(d, 'full.json')), { home });
  assert.equal(full.code, 0, full.stderr);
  const a = timeless(join(d, 'resumed.json'));
  assert.deepEqual(a, timeless(join(d, 'full.json')));
  assert.equal((a.measurements as Record<string, { value: number }>)['mmlu.accuracy']!.value, (a.accuracy_pct as number) / 100);
  // The header the killed run wrote is the uninterrupted run's, byte for byte.
  const firstLine = (p: string): string => readFileSync(p, 'utf8').split('\n', 1)[0]!;
  assert.equal(firstLine(results), firstLine(join(d, 'full.results.jsonl')));

  const afterResume = readResultsFile(results);
  const keys = afterResume.results.map((r) => `${r.phase}:${r.pass}:${r.index}`);
  assert.equal(keys.length, TOTAL);
  assert.equal(new Set(keys).size, TOTAL, 'no (phase, pass, index) twice');
  assert.deepEqual(afterResume.results.slice(0, before.results.length), before.results);
});

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));

it('a whole run of 60,000 MMLU rows (checked, then read in batches, results written) fits a 48 MB heap, where merely holding the rows does not (CSV and JSONL)', () => {
  const d = join(dir, 'mem');
  mkdirSync(d);
  const rows = generatedRows(5000, 57);
  const row = (i: number) => ({ ...rows[i % rows.length]!, question: `${i}. ${rows[i % rows.length]!.question}` });
  // A bound on the heap rather than a peak RSS: the peak follows V8's heap sizing, which moves with the
  // machine's load; a reader that held the rows cannot finish under the bound at all.
  const inHeap = (mb: number, code: string) =>
    spawnSync(process.execPath, [`--max-old-space-size=${mb}`, '--input-type=module', '-e', `const dist = ${JSON.stringify(DIST)};\n${code}`], {
      encoding: 'utf8',
      env: { ...process.env, JOULEBENCH_HOME: home },
    });
  for (const fmt of ['csv', 'jsonl'] as const) {
    const data = join(d, `gen_test.${fmt}`);
    writeLines(data, 60_000, (i) => (fmt === 'csv' ? csvLine(row(i)) : JSON.stringify(row(i)) + '\n'));
    const ran = inHeap(
      48,
      `const { runSession } = await import(dist + 'session/run-session.js');
       const r = await runSession({ suite: 'mmlu', data: ${JSON.stringify(data)}, target: 'echo', warmup: 0, bootstrap: 0, idle_ms: 0, history: false, overwrite: true, results: ${JSON.stringify(join(d, 'r.results.jsonl'))}, receipt: ${JSON.stringify(join(d, 'r.receipt.json'))} });
       if (r.report.case_count !== 60000 || r.report.measurements['mmlu.accuracy'] === undefined) throw new Error('ran ' + r.report.case_count);`,
    );
    assert.equal(ran.status, 0, `${fmt}: the streamed run in a 48 MB heap: ${ran.stderr.slice(-400)}`);
    const held = inHeap(48, `const { loadMmlu, readMmluRows } = await import(dist + 'suites/mmlu.js'); globalThis.held = [readMmluRows(${JSON.stringify(data)}), loadMmlu(${JSON.stringify(data)})];`);
    assert.notEqual(held.status, 0, `${fmt}: every row and case held fit in 48 MB: the bound proves nothing`);
    assert.match(held.stderr, /heap out of memory/);
    rmSync(data);
  }
});
