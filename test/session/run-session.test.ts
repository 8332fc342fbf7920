import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runSession, type SessionResult, type SessionSpec } from '../../src/index.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { BIN, cli } from '../helpers/cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-session-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Runs `runSession(spec)` in a fresh Node process (so nothing else writes to its stdout/stderr) and
 * returns what the process printed plus the session's result summary.
 */
function sessionInChild(spec: SessionSpec): Promise<{ printed: string; summary: { total_cases: number; results_seen: number; result: Record<string, unknown> } }> {
  const summaryPath = join(dir, `summary-${Math.random().toString(36).slice(2)}.json`);
  const src = new URL('../../src/index.ts', import.meta.url).href;
  const script = `
    import { writeFileSync } from 'node:fs';
    import { runSession } from ${JSON.stringify(src)};
    let total_cases = -1; let results_seen = 0;
    const r = await runSession(${JSON.stringify(spec)}, { onStart: (i) => { total_cases = i.total_cases; }, onResult: () => { results_seen++; } });
    writeFileSync(${JSON.stringify(summaryPath)}, JSON.stringify({ total_cases, results_seen, result: { report: r.report, paths: r.paths, history_id: r.history_id } }));
  `;
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    child.stdout.on('data', (d: Buffer) => (printed += d.toString()));
    child.stderr.on('data', (d: Buffer) => (printed += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => {
      if (code !== 0) return fail(new Error(`child exited ${code}: ${printed}`));
      ok({ printed, summary: JSON.parse(readFileSync(summaryPath, 'utf8')) });
    });
  });
}

test('runSession runs a suite end to end, writes report/results/receipt, prints nothing, and reports through hooks', async () => {
  const spec: SessionSpec = {
    suite: 'router',
    meter: 'model',
    idle_ms: 0,
    out: join(dir, 'a', 'report.json'),
    history: { path: join(dir, 'history.sqlite') },
    labels: { sweep_id: 's1', arm: 'ref' },
  };
  // The spec is plain data: a queue job or a sweep state file carries it as JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(spec)), spec);
  const { printed, summary } = await sessionInChild(spec);
  assert.equal(printed, '', 'the session printed something');
  assert.equal(summary.total_cases, 60, 'router: 30 cases × (1 warmup + 1 scored pass)');
  assert.equal(summary.results_seen, 60);
  const r = summary.result as unknown as SessionResult;
  assert.equal(r.report.case_count, 30);
  assert.deepEqual(r.report.stage_distribution, { cache: 6, kv: 7, graph: 8, neural: 9 });
  assert.equal(r.paths.report, spec.out);
  assert.deepEqual(JSON.parse(readFileSync(spec.out!, 'utf8')), JSON.parse(JSON.stringify(r.report)));
  assert.equal(readResultsFile(r.paths.results).results.length, 60);
  const receipt = JSON.parse(readFileSync(r.paths.receipt, 'utf8')) as { labels: Record<string, string>; argv: string[] };
  assert.deepEqual(receipt.labels, { sweep_id: 's1', arm: 'ref' });
  assert.deepEqual(receipt.argv, []);
  assert.equal(typeof r.history_id, 'number');
});

test('runSession takes a config inline (a sweep arm) and names its label in errors', async () => {
  await assert.rejects(
    runSession({ suite: 'mt', config: { where: 'plan.yaml: arms[2]', config: { target: { kind: 'openai', endpoint: 'http://127.0.0.1:9/v1', model: 'm', bogus: 1 } } }, history: false }),
    (e: Error & { code?: string }) => e.code === 'E_CONFIG' && e.message === 'plan.yaml: arms[2]: target.bogus: unknown key',
  );
});

test('runSession: an aborted session has its finished cases on disk and resumes without duplicates', async () => {
  let n = 0;
  const server = await startFakeOpenAI(() => ({ kind: 'plain', text: `answer ${n++}` }));
  try {
    const results = join(dir, 'abort.results.jsonl');
    const base: SessionSpec = { suite: 'mt', config: { where: 'inline', config: { target: { kind: 'openai', endpoint: server.url, model: 'm' } } }, meter: 'model', idle_ms: 0, results, receipt: join(dir, 'abort.receipt.json'), history: false };
    const ac = new AbortController();
    await assert.rejects(
      runSession(base, { signal: ac.signal, onResult: (_r, p) => p.done === 5 && ac.abort() }),
      (e: Error & { code?: string }) => e.code === 'E_RUN',
    );
    const before = readResultsFile(results).results.length;
    assert.ok(before >= 5 && before < 20, `${before} results after the abort`);
    const r = await runSession({ ...base, resume: true });
    assert.equal(r.resumed_cases, before);
    const ids = readResultsFile(results).results.map((c) => c.case_id);
    assert.equal(ids.length, 20);
    assert.equal(new Set(ids).size, 20);
    // The bundled mt suite has three two-turn cases, asked as conversations by a chat target: one request per turn.
    assert.equal(server.seen.length, 20 + 3, 'a finished case was asked again');
  } finally {
    await server.close();
  }
});

test('joulebench run: SIGINT writes the finished cases, says how to resume, exits 130; --resume completes the run', async () => {
  const hang = { stop: true };
  const server = await startFakeOpenAI((_req, i) => (hang.stop && i >= 3 ? { kind: 'hang' } : { kind: 'plain', text: 'x' }));
  try {
    const results = join(dir, 'sigint.results.jsonl');
    const args = ['run', '--suite', 'mt', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--no-idle', '--results', results, '--out', join(dir, 'sigint.json')];
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
    while (server.seen.length < 4) await new Promise((ok) => setTimeout(ok, 10));
    child.kill('SIGINT');
    assert.equal(await exited, 130);
    assert.match(stderr, new RegExp(`stopped by SIGINT; finished cases are in ${results.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(continue with --resume`));
    assert.equal(readResultsFile(results).results.length, 3);
    assert.equal(existsSync(join(dir, 'sigint.json')), false);
    hang.stop = false;
    const resumed = await cli([...args, '--resume']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const ids = readResultsFile(results).results.map((c) => c.case_id);
    assert.equal(ids.length, 20);
    assert.equal(new Set(ids).size, 20);
    // + 3: the bundled mt suite's three two-turn cases are asked turn by turn (one request each).
    assert.equal(server.seen.length, 3 + 1 + 17 + 3, 'finished cases were asked again');
  } finally {
    await server.close();
  }
});
