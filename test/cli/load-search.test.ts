import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startQueueServer, type QueueServer } from '../helpers/queue-server.js';

interface Step {
  step: number;
  request_rate: number;
  goodput_share: number;
  passed: boolean;
  p99_ttft_ms: number | null;
  results: string;
}

describe('joulebench run --find-max-rate: the highest rate that meets the SLO', () => {
  let server: QueueServer;
  let dir: string;
  // One request at a time, 50 ms each: the server saturates at 20 requests/s.
  before(async () => {
    server = await startQueueServer({ service_ms: 50, tokens: 4 });
    dir = mkdtempSync(join(tmpdir(), 'jb-load-search-'));
    writeFileSync(join(dir, 'suite.jsonl'), JSON.stringify({ id: 'c0', prompt: 'say ok', expected: 'ok' }) + '\n');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the saturation rate within 10 %, with every step, the stopping rule and a table', async () => {
    const out = join(dir, 'search.json');
    // Nearly even arrivals (burstiness 100): below 20/s a request barely waits; above it the queue grows by
    // request, so the later requests of a 50-request run miss TTFT ≤ 150 ms (50 ms of service + 100 ms of slack, for a loaded machine).
    const r = await cli([
      'run', '--suite', join(dir, 'suite.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--idle-ms', '1',
      '--find-max-rate', '--request-rate', '10', '--slo', 'ttft_ms=150', '--goodput-target', '0.9', '--num-requests', '50', '--burstiness', '100', '--cooldown-s', '0', '-o', out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(out, 'utf8')) as { format: string; rate_search: { steps: Step[]; max_request_rate: number; stopping_rule: string; goodput_target: number; slo: unknown } };
    assert.equal(doc.format, 'joulebench-rate-search/1');
    const s = doc.rate_search;
    assert.ok(Math.abs(s.max_request_rate - 20) <= 2, `found ${s.max_request_rate}/s; steps ${JSON.stringify(s.steps.map((x) => [x.request_rate, x.goodput_share]))}`);
    assert.deepEqual(s.slo, { ttft_ms: 150 });
    assert.equal(s.goodput_target, 0.9);
    assert.match(s.stopping_rule, /double the rate from 10\/s/);
    assert.deepEqual(s.steps.slice(0, 2).map((x) => x.request_rate), [10, 20]);
    assert.ok(s.steps.some((x) => !x.passed && x.request_rate > 20));
    for (const x of s.steps) {
      assert.equal(x.passed, x.goodput_share >= 0.9);
      assert.equal(typeof x.p99_ttft_ms, 'number');
      assert.ok(existsSync(resolve(dirname(out), x.results)), x.results);
    }
    assert.equal(s.steps[0]!.results, 'search.step-1.results.jsonl');
    assert.match(r.stderr, /rate search \(SLO ttft_ms≤150, goodput share ≥ 0\.9\)/);
    assert.match(r.stderr, /max_request_rate \d+(\.\d+)?\/s \(stopped: /);
  });

  it('refuses --find-max-rate without --slo, and --max-request-rate without --find-max-rate, in one line', async () => {
    const base = ['run', '--suite', join(dir, 'suite.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history'];
    const [noSlo, stray] = await Promise.all([cli([...base, '--find-max-rate']), cli([...base, '--request-rate', '5', '--max-request-rate', '10'])]);
    assert.equal(noSlo.code, 2);
    assert.match(noSlo.stderr, /--find-max-rate needs --slo/);
    assert.equal(stray.code, 2);
    assert.match(stray.stderr, /--max-request-rate applies to --find-max-rate only/);
  });
});
