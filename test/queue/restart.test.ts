import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseQueueUrl } from '../../src/queue/connection.js';
import { runArmsOnQueue, type QueueArm } from '../../src/queue/coordinator.js';
import type { ArmJob } from '../../src/queue/job.js';
import { VERSION } from '../../src/version.js';
import { BIN } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';
import { redisMissing, startRedis, type TestRedis } from '../helpers/redis.js';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet'];
const missing = redisMissing();

describe('queue: a coordinator restart and a Redis restart lose nothing and double nothing', { skip: missing ?? false }, () => {
  let redis: TestRedis;
  let server: LoadServer;
  let dir: string;
  const children: ChildProcess[] = [];
  const asked = new Map<string, number>();

  before(async () => {
    redis = await startRedis();
    server = await startLoadServer((prompt) => {
      const [, word, model] = prompt.split(' ');
      asked.set(`${model}:${word}`, (asked.get(`${model}:${word}`) ?? 0) + 1);
      return { ttft_ms: 150, tpot_ms: 5, tokens: 2, answer: word! };
    });
    dir = mkdtempSync(join(tmpdir(), 'jb-queue-restart-'));
  });
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await server?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const arm = (model: string): QueueArm => {
    const text = WORDS.map((w, i) => JSON.stringify({ id: `q${i}`, prompt: `say ${w} ${model}`, expected: w })).join('\n') + '\n';
    writeFileSync(join(dir, `suite-${model}.jsonl`), text);
    const job: ArmJob = {
      format: 'joulebench-arm-job/1',
      sweep_id: 'restart-test',
      arm: model,
      suite: `suite-${model}.jsonl`,
      suite_file: { name: `suite-${model}.jsonl`, text },
      spec: { suite: `suite-${model}.jsonl`, target: 'openai', endpoint: server.url, model, meter: 'auto', idle_ms: 1 },
      joulebench_version: VERSION,
    };
    return { job, results: join(dir, `${model}.results.jsonl`), report: join(dir, `${model}.json`), receipt: join(dir, `${model}.receipt.json`) };
  };

  it('the coordinator killed and restarted re-attaches; Redis restarted empty: the cases on disk are given back and the arm resumes', async () => {
    for (const n of [1, 2]) {
      const home = mkdtempSync(join(dir, `home-${n}-`));
      const c = spawn(process.execPath, [BIN, 'worker', '--queue', redis.url, '--stall-ms', '5000', '--idle-ms', '1'], { env: { ...process.env, JOULEBENCH_HOME: home }, stdio: 'ignore' });
      children.push(c);
    }
    const conn = parseQueueUrl(redis.url, undefined, {});
    const arms = [arm('m1'), arm('m2')];
    const count = (a: QueueArm): number => {
      try {
        return readFileSync(a.results, 'utf8').split('\n').filter((l) => l.includes('"record":"case"')).length;
      } catch {
        return 0;
      }
    };

    // 1. The coordinator stops (as if killed) after 3 cases of m1.
    const stop = new AbortController();
    await assert.rejects(
      runArmsOnQueue({ connection: conn, arms, poll_ms: 50, signal: stop.signal, onRecord: () => count(arms[0]!) >= 3 && stop.abort() }),
      /sweep aborted/,
    );
    const before = count(arms[0]!);
    assert.ok(before >= 3);

    // 2. Restarted: re-attaches to the running jobs. 3. Mid-way, Redis dies and comes back empty on the same port.
    let restarted = false;
    const outcomes = await runArmsOnQueue({
      connection: conn,
      arms,
      poll_ms: 50,
      onRecord: () => {
        if (!restarted && count(arms[0]!) >= before + 2) {
          restarted = true;
          void (async () => {
            const port = redis.port;
            await redis.stop();
            redis = await startRedis({ port });
          })();
        }
      },
    });
    assert.ok(restarted, 'Redis was restarted mid-sweep');
    for (const o of outcomes) {
      assert.equal(o.error, null, o.error ?? '');
      const lines = readFileSync(o.arm.results, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const cases = lines.filter((l) => l.record === 'case');
      assert.equal(cases.length, WORDS.length, `${o.arm.job.arm}: every case once`);
      assert.equal(new Set(cases.map((c) => c.index)).size, WORDS.length);
      assert.equal(lines.filter((l) => l.record === 'end').length, 1);
      // A worker's run_measures (its idle and window, over the cases it ran) is not the arm's: dropped.
      assert.equal(lines.filter((l) => l.record === 'run_measures').length, 0);
      assert.equal((JSON.parse(readFileSync(o.arm.report, 'utf8')) as { accuracy_pct: number }).accuracy_pct, 100);
    }
    // The coordinator's restart did not enqueue the arms again: no case was asked more than twice
    // (once, plus at most a re-ask of what was in flight when Redis vanished).
    for (const [k, n] of asked) assert.ok(n <= 2, `${k} asked ${n} times`);
  });
});
