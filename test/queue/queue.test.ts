import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseQueueUrl } from '../../src/queue/connection.js';
import { runArmsOnQueue, type QueueArm } from '../../src/queue/coordinator.js';
import { queueNameFor, type ArmJob } from '../../src/queue/job.js';
import { runSession } from '../../src/session/run-session.js';
import { VERSION } from '../../src/version.js';
import { BIN } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';
import { redisMissing, startRedis, type TestRedis } from '../helpers/redis.js';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
const PASSWORD = 'redis-pw-Q7xZ3-not-for-logs';
const missing = redisMissing();

describe('sweeps on a queue: BullMQ on a real redis-server', { skip: missing ?? false }, () => {
  let redis: TestRedis;
  let server: LoadServer;
  let dir: string;
  const workers: { child: ChildProcess; stderr: string[] }[] = [];
  /** Requests per model, counted at the server. */
  const asked = new Map<string, number>();

  before(async () => {
    redis = await startRedis({ password: PASSWORD });
    // Model "good-*" answers the word; "bad-*" answers wrongly for every third word. Each case ~120 ms.
    server = await startLoadServer((prompt) => {
      const [, word, model] = prompt.split(' ');
      asked.set(model!, (asked.get(model!) ?? 0) + 1);
      const wrong = model!.startsWith('bad') && WORDS.indexOf(word!) % 3 === 0;
      return { ttft_ms: 100, tpot_ms: 5, tokens: 3, answer: wrong ? 'zulu' : word! };
    });
    dir = mkdtempSync(join(tmpdir(), 'jb-queue-'));
  });
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await server?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function startWorker(n: number): { child: ChildProcess; stderr: string[] } {
    const home = mkdtempSync(join(dir, `home-${n}-`));
    const child = spawn(process.execPath, [BIN, 'worker', '--queue', redis.url, '--stall-ms', '5000', '--idle-ms', '1'], {
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home, GOOD_KEY: 'sk-worker-side-key' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const w = { child, stderr: [] as string[] };
    child.stderr!.on('data', (d: Buffer) => w.stderr.push(d.toString()));
    workers.push(w);
    return w;
  }

  /** Arm suites: one suite file per model, so the prompt names the model (the server counts by it). */
  function armFor(model: string, extra: Partial<ArmJob> = {}, spec: Record<string, unknown> = {}): { job: ArmJob; suitePath: string } {
    const suitePath = join(dir, `suite-${model}.jsonl`);
    writeFileSync(suitePath, WORDS.map((w, i) => JSON.stringify({ id: `q${i}`, prompt: `say ${w} ${model}`, expected: w })).join('\n') + '\n');
    return {
      suitePath,
      job: {
        format: 'joulebench-arm-job/1',
        sweep_id: 'sweep-test',
        arm: model,
        suite: `suite-${model}.jsonl`,
        suite_file: { name: `suite-${model}.jsonl`, text: readFileSync(suitePath, 'utf8') },
        spec: { suite: `suite-${model}.jsonl`, target: 'openai', endpoint: server.url, model, meter: 'auto', idle_ms: 1, ...spec },
        joulebench_version: VERSION,
        ...extra,
      },
    };
  }

  it('four arms on three workers: a worker killed mid-arm is resumed elsewhere; every case once; results equal a local run', async (t) => {
    const ws = [startWorker(1), startWorker(2), startWorker(3)];
    const models = ['good-a', 'bad-a', 'good-b', 'bad-b'];
    const arms = models.map((m) => armFor(m));
    // An arm whose key this worker does not have fails with that reason; the workers keep going.
    const keyless = armFor('good-nokey', {}, { credentialsRef: 'env:MISSING_ON_WORKER' });
    const queueArms: QueueArm[] = [...arms, keyless].map(({ job }) => ({
      job,
      results: join(dir, `${job.arm}.results.jsonl`),
      report: join(dir, `${job.arm}.json`),
      receipt: join(dir, `${job.arm}.receipt.json`),
    }));
    // A malformed job straight onto the queue: failed with the reason, the workers keep running.
    const { Queue } = await import('bullmq');
    const conn = parseQueueUrl(redis.url, undefined, {});
    const q = new Queue(queueNameFor(undefined), { connection: { host: conn.host, port: conn.port, password: conn.password } });
    // Closed however the test ends: an open queue on a stopped redis-server reconnects forever and keeps the test process alive.
    t.after(() => q.close());
    const bad = await q.add('arm', { format: 'joulebench-arm-job/1', arm: 'x' }, { jobId: 'malformed-1' });

    let killed: string | null = null;
    const byWorker = new Map<string, Set<string>>();
    const outcomes = await runArmsOnQueue({
      connection: conn,
      arms: queueArms,
      poll_ms: 100,
      onRecord: (arm, rec, worker) => {
        if (rec.record !== 'case') return;
        let set = byWorker.get(arm.job.arm);
        if (!set) byWorker.set(arm.job.arm, (set = new Set()));
        set.add(worker);
        // SIGKILL the worker running good-a once it has streamed 4 cases.
        const done = readFileSync(arm.results, 'utf8').split('\n').filter((l) => l.includes('"record":"case"')).length;
        if (killed === null && arm.job.arm === 'good-a' && done >= 4) {
          const pid = Number(/-(\d+)-[0-9a-f]{6}$/.exec(worker)?.[1]);
          const w = ws.find((x) => x.child.pid === pid);
          assert.ok(w, `worker ${worker} is one of ours`);
          killed = worker;
          w.child.kill('SIGKILL');
        }
      },
    });
    assert.ok(killed, 'a worker was killed mid-arm');
    assert.equal((await bad.getState()), 'failed');
    assert.match((await q.getJob('malformed-1'))!.failedReason, /malformed job: sweep_id/);
    await q.close();

    const byArm = new Map(outcomes.map((o) => [o.arm.job.arm, o]));
    assert.match(byArm.get('good-nokey')!.error ?? '', /MISSING_ON_WORKER/);
    for (const m of models) {
      const o = byArm.get(m)!;
      assert.equal(o.error, null, `${m}: ${o.error}`);
      const lines = readFileSync(o.arm.results, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const cases = lines.filter((l) => l.record === 'case');
      assert.equal(lines.filter((l) => l.record === 'header').length, 1, `${m}: one header`);
      // The suite is named as the coordinator has it, not as the worker's temporary copy (the HTML report reads prompts from it).
      assert.equal(lines[0]!.suite_source, resolve(o.arm.job.suite), `${m}: suite_source`);
      assert.equal(cases.length, WORDS.length, `${m}: every case once`);
      assert.equal(new Set(cases.map((c) => c.index)).size, WORDS.length);
      assert.equal(lines.at(-1)!.record, 'end');
      // An arm whose cases all came with their worker's measures is a whole run, as a local one is.
      const measures = lines.filter((l) => l.record === 'run_measures');
      if (byWorker.get(m)!.size === 1) {
        assert.equal(measures.length, 1, `${m}: a run_measures line`);
        assert.equal(lines.at(-2)!.record, 'run_measures', `${m}: before the end line`);
      } else assert.equal(measures.length, 0, `${m}: a killed worker's cases have no measures: none is made up`);
      // The same plan run locally gives the same digest and accuracy.
      const local = await runSession(
        { suite: arms[models.indexOf(m)]!.suitePath, target: 'openai', endpoint: server.url, model: m, meter: 'auto', idle_ms: 1, results: join(dir, `${m}.local.results.jsonl`), history: false },
        {},
      );
      const remote = JSON.parse(readFileSync(o.arm.report, 'utf8')) as { suite_digest?: string; accuracy_pct: number; suite: { digest: string } };
      assert.equal(remote.accuracy_pct, local.report.accuracy_pct, `${m}: accuracy`);
      assert.deepEqual(JSON.stringify(remote).match(/"digest":"[^"]+"/)?.[0], JSON.stringify(local.report).match(/"digest":"[^"]+"/)?.[0], `${m}: digest`);
      assert.equal(local.report.accuracy_pct, m.startsWith("bad") ? 66.6667 : 100);
    }
    // The killed arm was finished by another worker, resuming (not re-asking what was streamed).
    assert.ok(byWorker.get('good-a')!.size >= 2, 'good-a ran on two workers');
    const goodA = readFileSync(byArm.get('good-a')!.arm.results, 'utf8');
    assert.match(goodA, /"record":"resume"/);
    // Asked at most once more than its cases in the queue (one in flight when killed), plus the local run.
    assert.ok(asked.get('good-a')! <= WORDS.length + 1 + WORDS.length, `good-a asked ${asked.get('good-a')} times`);

    // The password never reached a file or a log line.
    const everything = [...ws.flatMap((w) => w.stderr), ...filesUnder(dir).map((p) => readFileSync(p, 'utf8'))].join('\n');
    assert.ok(!everything.includes(PASSWORD), 'the Redis password leaked');
    assert.ok(!everything.includes('sk-worker-side-key'), 'a worker-side key leaked');
    for (const w of ws) if (w.child.exitCode === null) w.child.kill('SIGTERM');
  });
});

function filesUnder(d: string): string[] {
  return readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}
