import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-maxerr-'));
let server: FakeServer;
let deadUrl = '';
before(async () => {
  // Case n: 401 for the first three requests, then 500s, then success from the 10th on.
  server = await startFakeOpenAI((_req, n) =>
    n < 3
      ? { kind: 'status', status: 401, body: JSON.stringify({ error: { message: 'Incorrect API key provided' } }) }
      : n < 9
        ? { kind: 'status', status: 500 }
        : { kind: 'plain', text: 'ok' },
  );
  const s = http.createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  deadUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1`;
  await new Promise<void>((ok) => s.close(() => ok()));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function resultsOf(path: string): { record: string; error: unknown }[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { record: string; error: unknown });
}

describe('target failures are visible as they happen', () => {
  it('a dead endpoint: the first error shown once with its cause, the run stops after 20 in a row (exit 1), finished cases kept', async () => {
    const results = join(dir, 'dead.jsonl');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', deadUrl, '--model', 'm', '--meter', 'model', '--no-history', '-q', '--results', results, '-o', join(dir, 'dead.json')]);
    assert.equal(r.code, 1, r.stderr);
    const first = r.stderr.split('\n').filter((l) => /target error on case/.test(l));
    assert.equal(first.length, 1, r.stderr);
    assert.match(first[0]!, /case "rt-cache-1": E_CONNECTION: connection failed: ECONNREFUSED/);
    assert.match(r.stderr, /stopped after 20 consecutive failures at the target \(max_errors 20\)/);
    const cases = resultsOf(results).filter((l) => l.record === 'case');
    assert.equal(cases.length, 20, 'the cases that ran are on disk');
  });

  it('--max-errors 0 never stops; --max-errors 3 stops at 3', async () => {
    const never = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', deadUrl, '--model', 'm', '--meter', 'model', '--no-history', '-q', '--max-errors', '0', '--results', join(dir, 'never.jsonl'), '-o', join(dir, 'never.json')]);
    assert.equal(never.code, 1);
    assert.match(never.stderr, /every case failed/);
    assert.equal(resultsOf(join(dir, 'never.jsonl')).filter((l) => l.record === 'case').length, 30);
    const three = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', deadUrl, '--model', 'm', '--meter', 'model', '--no-history', '-q', '--max-errors', '3', '--results', join(dir, 'three.jsonl'), '-o', join(dir, 'three.json')]);
    assert.equal(three.code, 1);
    assert.equal(resultsOf(join(dir, 'three.jsonl')).filter((l) => l.record === 'case').length, 3);
  });

  it("each kind once: a 401 with the server's message, then a 500; a run that recovers finishes (exit 0)", async () => {
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--meter', 'model', '--no-history', '-q', '-o', join(dir, 'mixed.json'), '--results', join(dir, 'mixed.jsonl')]);
    assert.equal(r.code, 0, r.stderr);
    const first = r.stderr.split('\n').filter((l) => /target error on case/.test(l));
    assert.equal(first.length, 2, r.stderr);
    assert.match(first[0]!, /E_HTTP \(HTTP 401\): HTTP 401: Incorrect API key provided/);
    assert.match(first[1]!, /E_HTTP \(HTTP 500\)/);
    assert.equal((JSON.parse(readFileSync(join(dir, 'mixed.json'), 'utf8')) as { error_count: number }).error_count, 9);
  });
});

describe('max_errors in the library runner', () => {
  it('concurrent cases: no new case starts once the limit is reached; the error is E_RUN', async () => {
    const { run } = await import('../../src/runner/run.js');
    const { MemorySink } = await import('../../src/runner/results-file.js');
    const cases = Array.from({ length: 100 }, (_, i) => ({ id: `c${i}`, prompt: 'p', expected: 'x', dataset: 'd', weight: 1, tags: [] }));
    let asked = 0;
    const target = {
      id: 't',
      kind: 'test',
      answer: async () => {
        asked++;
        await new Promise((ok) => setTimeout(ok, 1));
        throw Object.assign(new Error('boom'), { code: 'E_CONNECTION' });
      },
      describe: () => ({}),
    };
    const sink = new MemorySink();
    await assert.rejects(
      run({ suite: { name: 's', version: '1', scorer: 'substring', source: 't', cases }, target, concurrency: 4, max_errors: 10, sink }),
      (e: Error & { code?: string }) => e.code === 'E_RUN' && /stopped after 10 consecutive failures/.test(e.message),
    );
    assert.ok(asked >= 10 && asked <= 13, `asked ${asked}`);
  });
});
