import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseQueueUrl } from '../../src/queue/connection.js';
import { runArmsOnQueue, type QueueArm } from '../../src/queue/coordinator.js';
import { jobIdOf, queueNameFor, recordsKey, type ArmJob } from '../../src/queue/job.js';
import { redisMissing, startRedis, type TestRedis } from '../helpers/redis.js';

const missing = redisMissing();

// The coordinator's promise to its caller: a record is on disk before onRecord hears of it, and a
// callback that throws loses nothing. Seeded straight into the records stream (no worker), so the
// header and the cases arrive in one batch, as they do from a fast worker on a loaded machine.
describe('coordinator: records reach the disk before anyone is told', { skip: missing ?? false }, () => {
  let redis: TestRedis;
  let dir: string;
  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'jb-drain-'));
  });
  after(async () => {
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** An arm of one echo case, its suite written under `dir`, its files named after the arm. */
  function oneCaseArm(sweep_id: string, name: string): QueueArm {
    const suite = join(dir, `suite-${name}.jsonl`);
    writeFileSync(suite, '{"id":"a","prompt":"p","expected":"x"}\n');
    const job = { format: 'joulebench-arm-job/1', sweep_id, arm: name, suite, suite_file: { name: `suite-${name}.jsonl`, text: readFileSync(suite, 'utf8') }, spec: { suite, target: 'echo' } } as ArmJob;
    return { job, results: join(dir, `${name}.results.jsonl`), report: join(dir, `${name}.json`), receipt: join(dir, `${name}.receipt.json`) };
  }

  it('one batch of header + cases + a malformed record: every record on disk when onRecord runs; a throwing onRecord loses none', { timeout: 30_000 }, async () => {
    const arm = oneCaseArm('drain-test', 'only');
    const { job } = arm;
    const { Redis } = await import('ioredis');
    const r = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: false, maxRetriesPerRequest: 1 });
    const key = recordsKey(jobIdOf(job));
    await r.xadd(key, '*', 'r', JSON.stringify({ record: 'header', format: 'joulebench-results/1' }), 'w', 'w1');
    await r.xadd(key, '*', 'r', '{not json', 'w', 'w1');
    for (let i = 0; i < 3; i++) await r.xadd(key, '*', 'r', JSON.stringify({ record: 'case', phase: 'scored', pass: 0, index: i }), 'w', 'w1');
    await r.xadd(key, '*', 'r', JSON.stringify({ record: 'case', phase: 'scored', pass: 0, index: 1 }), 'w', 'w2'); // a repeat: written once
    r.disconnect();

    const heard: string[] = [];
    const logs: string[] = [];
    const ctl = new AbortController();
    let threw = false;
    await assert.rejects(
      runArmsOnQueue({
        connection: parseQueueUrl(redis.url, undefined, {}),
        arms: [arm],
        poll_ms: 20,
        signal: ctl.signal,
        onLog: (l) => logs.push(l),
        onRecord: (_a, rec) => {
          // On disk already: the file exists and holds this record.
          assert.ok(existsSync(arm.results), 'the results file exists when onRecord runs');
          const text = readFileSync(arm.results, 'utf8');
          if (rec.record === 'case') assert.ok(text.includes(`"index":${String(rec.index)}`), 'the case is on disk');
          heard.push(`${String(rec.record)}:${String(rec.index ?? '')}`);
          if (!threw) {
            threw = true;
            throw new Error('a caller whose callback throws');
          }
          if (heard.length >= 3) ctl.abort();
        },
      }),
      /sweep aborted/,
    );
    const lines = readFileSync(arm.results, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines.map((l) => `${String(l.record)}:${String(l.index ?? '')}`), ['header:', 'case:0', 'case:1', 'case:2']);
    assert.ok(logs.some((l) => /not JSON; skipped/.test(l)), 'the malformed record is said');
    assert.ok(logs.some((l) => /a caller whose callback throws/.test(l)), 'the throwing callback is said');
  });

  it('a job completed without a result is never an arm done with nothing: it ends as an error, with no end line or report', { timeout: 30_000 }, async () => {
    const arm = oneCaseArm('resultless-test', 'resultless');
    // A worker that completes the job and returns nothing: what the coordinator reads when its copy of
    // the job predates the completion (a race seen under load), made permanent here.
    const { Worker } = await import('bullmq');
    const w = new Worker(queueNameFor(undefined), async () => undefined, { connection: { host: '127.0.0.1', port: redis.port } });
    try {
      const [outcome] = await runArmsOnQueue({ connection: parseQueueUrl(redis.url, undefined, {}), arms: [arm], poll_ms: 10 });
      assert.match(outcome!.error ?? '', /completed but holds no result/);
      assert.equal(outcome!.result, null);
      assert.equal(existsSync(arm.report), false);
      assert.equal(existsSync(arm.results) && readFileSync(arm.results, 'utf8').includes('"record":"end"'), false);
    } finally {
      await w.close();
    }
  });
});
