import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { startFakeOpenAI, type FakeServer, type SeenRequest } from '../helpers/fake-openai.js';

const BIN = resolve('bin/joulebench.js');
const KEY = 'sk-joulebench-test-SECRET-7f3a9c1d';
const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** Spawns the built CLI (async, so the in-process fake server can answer). */
function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((ok) => {
    const p = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('close', (code) => ok({ code: code ?? -1, stdout, stderr }));
  });
}

/** Every file under dir, recursively, with its text. */
function allFiles(dir: string): [string, string][] {
  return readdirSync(dir).flatMap((f): [string, string][] => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? allFiles(p) : [[p, readFileSync(p, 'utf8')]];
  });
}

function assertNoKey(dir: string, ...streams: string[]): void {
  for (const s of streams) assert.equal(s.includes(KEY), false, 'key in stdout/stderr');
  const files = allFiles(dir);
  assert.ok(files.length > 0);
  for (const [p, text] of files) assert.equal(text.includes(KEY), false, `key in ${p}`);
}

// Our own MMLU-format items: the right answer is always the option "right".
const items = Array.from({ length: 6 }, (_, i) => {
  const choices = ['wrong', 'wrong', 'wrong', 'wrong'];
  choices[i % 4] = 'right';
  return { question: `Item ${i}: pick the right one`, subject: i < 4 ? 'alpha' : 'beta', choices, answer: i % 4 };
});

function workdir(): string {
  const d = mkdtempSync(join(tmpdir(), 'jb-cli-openai-'));
  writeFileSync(join(d, 'mmlu.jsonl'), items.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return d;
}

/** A model that reads the prompt and answers the letter of "right" (or a wrong letter for item 5). */
function modelReply(req: SeenRequest): string {
  const prompt = String((req.body.messages as { content: string }[])[0]!.content);
  const line = prompt.split('\n').find((l) => / right$/.test(l)) ?? 'A.';
  return prompt.includes('Item 5') ? 'Answer: A' : `Answer: ${line[0]}`;
}

test('mmlu against an endpoint via config: retries, measurements, digest relabel, key used but never written', async () => {
  const seenByCase = new Map<string, number>();
  const s = await startFakeOpenAI((req) => {
    const prompt = String((req.body.messages as { content: string }[])[0]!.content);
    const n = (seenByCase.get(prompt) ?? 0) + 1;
    seenByCase.set(prompt, n);
    if (prompt.includes('Item 1') && n === 1) return { kind: 'status', status: 429, headers: { 'retry-after': '1' } };
    if (prompt.includes('Item 2')) return { kind: 'status', status: 503, body: JSON.stringify({ error: { message: `upstream rejected Bearer ${KEY}` } }) };
    return { kind: 'stream', text: modelReply(req), usage: { prompt_tokens: 40, completion_tokens: 3 } };
  });
  servers.push(s);
  const d = workdir();
  writeFileSync(
    join(d, 'run.yaml'),
    `target:\n  mode: runtime\n  endpoint: "${s.url}"\n  model: toy\n  credentials_ref: env:JB_TEST_KEY\n  max_tokens: 4\nparams:\n  data: mmlu.jsonl\n  retry:\n    max_attempts: 2\n    backoff_base_s: 0.01\n    backoff_max_s: 0.05\nprices:\n  input_usd_per_mtok: 1\n  output_usd_per_mtok: 4\ntimeouts:\n  request_s: 5\n`,
  );
  const r = await cli(['run', '--suite', 'mmlu', '--config', 'run.yaml', '--warmup', '0', '--no-idle', '--out', 'out/report.json'], d, { JB_TEST_KEY: KEY });
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(join(d, 'out/report.json'), 'utf8'));
  assert.equal(report.case_count, 6);
  assert.equal(report.error_count, 1, 'item 2 still fails after 2 attempts and is counted');
  assert.equal(report.correct_count, 4, 'items 0,1,3,4 right; 2 errored; 5 wrong');
  assert.match(report.suite.version, /\/retry-2$/);
  assert.equal(report.energy_attribution, 'exclusive');
  const m = report.measurements;
  assert.deepEqual(m['mmlu.accuracy'], { value: 0.666667, unit: 'fraction', class: 'deterministic', official: true });
  assert.equal(m['mmlu.total_tokens'].value, 5 * 43);
  assert.equal(m['mmlu.cost_usd'].value, (5 * 40 * 1 + 5 * 3 * 4) / 1e6);
  assert.equal(m['mmlu.retry_count'].value, 2, 'one retry for item 1, one for item 2');
  assert.equal(m['mmlu.retry_count'].official, false);
  const lines = readFileSync(join(d, 'out/report.results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const failed = lines.find((l) => l.case_id === 'alpha-2');
  assert.equal(failed.error.status, 503);
  assert.equal(failed.attempts, 2);
  assert.match(failed.error.message, /REDACTED/);
  assert.ok(lines.find((l) => l.case_id === 'alpha-0').ttft_ms > 0);
  for (const req of s.seen) assert.equal(req.headers.authorization, `Bearer ${KEY}`);
  assertNoKey(d, r.stdout, r.stderr);

  // Replay the recorded results offline (seed 003's mock path): same verdicts, no server.
  const before = s.seen.length;
  writeFileSync(join(d, 'mock.yaml'), 'target:\n  mode: mock\n  answers: out/report.results.jsonl\nparams:\n  data: mmlu.jsonl\n');
  const rp = await cli(['run', '--suite', 'mmlu', '--config', 'mock.yaml', '--warmup', '0', '--no-idle', '--out', 'replay/report.json', '-q'], d);
  assert.equal(rp.code, 0, rp.stderr);
  const rr = JSON.parse(readFileSync(join(d, 'replay/report.json'), 'utf8'));
  assert.equal(rr.correct_count, 4);
  assert.equal(rr.error_count, 1, 'the case with no recorded answer is an error, not a crash');
  assert.equal(s.seen.length, before);
  assert.match(rp.stderr, /mmlu\.cost_usd omitted/);
  assert.equal('mmlu.cost_usd' in rr.measurements, false);
});

test('error paths never leak the key: 401 echoing it, every case failing (exit 1)', async () => {
  const s = await startFakeOpenAI(() => ({ kind: 'status', status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}. Authorization: Bearer ${KEY}` } }) }));
  servers.push(s);
  const d = workdir();
  const r = await cli(['run', '--suite', 'mmlu', '--data', 'mmlu.jsonl', '--target', 'openai', '--endpoint', s.url, '--model', 'toy', '--credentials-ref', 'env:JB_TEST_KEY', '--warmup', '0', '--no-idle'], d, {
    JB_TEST_KEY: KEY,
    JOULEBENCH_DEBUG: '1',
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /every case failed/);
  assert.equal(s.seen.length, 6, '401 is not retried');
  assertNoKey(d, r.stdout, r.stderr);
});

test('an invalid config fails before any request: one line naming the key, exit 2', async () => {
  const s = await startFakeOpenAI(() => ({ kind: 'plain', text: 'A' }));
  servers.push(s);
  const d = workdir();
  writeFileSync(join(d, 'bad.yaml'), `target:\n  kind: openai\n  endpoint: "${s.url}"\n  model: toy\n  credentials_ref: env:JB_TEST_KEY\nparams:\n  retry:\n    max_attempts: 0\n`);
  const r = await cli(['run', '--suite', 'mmlu', '--data', 'mmlu.jsonl', '--config', 'bad.yaml'], d, { JB_TEST_KEY: KEY });
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim(), 'joulebench: bad.yaml: params.retry.max_attempts must be >= 1');
  assert.equal(s.seen.length, 0);
  const unset = await cli(['run', '--target', 'openai', '--endpoint', s.url, '--model', 'm', '--credentials-ref', 'env:JB_NOT_SET_ANYWHERE'], d);
  assert.equal(unset.code, 2);
  assert.match(unset.stderr, /environment variable JB_NOT_SET_ANYWHERE is not set/);
  const meta = await cli(['run', '--target', 'openai', '--endpoint', 'http://169.254.169.254/v1', '--model', 'm', '--credentials-ref', 'env:JB_TEST_KEY'], d, { JB_TEST_KEY: KEY });
  assert.equal(meta.code, 2);
  assert.match(meta.stderr, /link-local or cloud-metadata/);
  assertNoKey(d, r.stdout, r.stderr, unset.stderr, meta.stdout, meta.stderr);
});

test('the cascade with the openai target as its neural backend, at concurrency 4', async () => {
  const s = await startFakeOpenAI(() => ({ kind: 'stream', text: 'I do not know', usage: { prompt_tokens: 9, completion_tokens: 4 } }));
  servers.push(s);
  const d = workdir();
  const r = await cli(['run', '--suite', 'mt', '--target', 'cascade', '--neural', 'openai', '--endpoint', s.url, '--model', 'toy', '--warmup', '0', '--no-idle', '--concurrency', '4', '--out', 'c.json'], d);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(join(d, 'c.json'), 'utf8'));
  assert.ok(report.stage_distribution.neural > 0);
  assert.equal(report.stage_distribution.neural, s.seen.length, 'every neural case went to the endpoint');
  assert.equal(report.target, 'cascade:reference+openai:toy');
  assert.equal(report.energy_attribution, 'shared');
  assert.ok(report.completion_tokens >= 4);
  assert.ok(report.ttft_p50_ms > 0);
});

// Every request of a run carries the run's abort signal (Ctrl-C): one listener a request made Node warn
// "MaxListenersExceededWarning: Possible EventTarget memory leak" on stderr at --concurrency above 10.
test('--concurrency 32: no listener-leak warning on stderr, every case answered', async () => {
  const s = await startFakeOpenAI(() => ({ kind: 'plain', text: 'B' }));
  servers.push(s);
  const d = mkdtempSync(join(tmpdir(), 'jb-cli-openai-c32-'));
  writeFileSync(join(d, 'many.jsonl'), Array.from({ length: 64 }, (_, i) => JSON.stringify({ id: `q${i}`, question: `Which ${i}?`, choices: ['w', 'x', 'y', 'z'], answer: 'B', subject: 's' })).join('\n') + '\n');
  const r = await cli(['run', '--suite', 'mmlu', '--data', 'many.jsonl', '--target', 'openai', '--endpoint', s.url, '--model', 'toy', '--warmup', '0', '--no-idle', '--concurrency', '32', '--results', 'r.jsonl', '-q'], d);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /MaxListeners|memory leak/);
  assert.equal(s.seen.length, 64);
  const lines = readFileSync(join(d, 'r.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { record: string; passed?: boolean });
  assert.equal(lines.filter((l) => l.record === 'case' && l.passed === true).length, 64);
});
