import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, cli } from '../helpers/cli.js';
import { startLoadServer, type LoadServer } from '../helpers/load-server.js';
import { redisMissing, startRedis, type TestRedis } from '../helpers/redis.js';

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const missing = redisMissing();

describe('sweep --queue: the same plan on workers gives the same files as a local sweep', { skip: missing ?? false }, () => {
  let redis: TestRedis;
  let server: LoadServer;
  let dir: string;
  let worker: ChildProcess;

  before(async () => {
    redis = await startRedis({ password: 'sweep-q-pw-91' });
    server = await startLoadServer((prompt) => {
      const [, word] = prompt.split(' ');
      return { ttft_ms: 5, tpot_ms: 1, tokens: 2, answer: prompt.includes('model-b') && WORDS.indexOf(word!) % 2 === 0 ? 'zulu' : word! };
    });
    dir = mkdtempSync(join(tmpdir(), 'jb-sweep-queue-'));
    worker = spawn(process.execPath, [BIN, 'worker', '--queue', redis.url, '--stall-ms', '5000', '--idle-ms', '1'], {
      env: { ...process.env, JOULEBENCH_HOME: mkdtempSync(join(dir, 'wh-')) },
      stdio: 'ignore',
    });
  });
  after(async () => {
    worker?.kill('SIGKILL');
    await server?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two arms: accuracy and digest equal between the queue sweep and the local one; the password is nowhere', async () => {
    // The prompt names the model so the server can answer per model.
    for (const m of ['model-a', 'model-b']) {
      writeFileSync(join(dir, `${m}.jsonl`), WORDS.map((w, i) => JSON.stringify({ id: `q${i}`, prompt: `say ${w} ${m}`, expected: w })).join('\n') + '\n');
    }
    const plan = join(dir, 'plan.yaml');
    writeFileSync(
      plan,
      `name: qtest\nsuites: [${join(dir, 'model-a.jsonl')}]\nbaseline: a\narms:\n  - name: a\n    kind: openai\n    endpoint: ${server.url}\n    model: m\n  - name: b\n    kind: openai\n    endpoint: ${server.url}\n    model: m\n    where: {}\n`,
    );
    const home = mkdtempSync(join(dir, 'home-'));
    const queued = await cli(['sweep', plan, '--queue', redis.url, '--out-dir', join(dir, 'q'), '--no-idle', '--bootstrap', '200'], { env: { JOULEBENCH_HOME: home } });
    assert.equal(queued.code, 0, queued.stderr);
    // Progress across workers: runs done and cases per worker.
    assert.match(queued.stderr, /sweep: 2\/2 runs done, 12 cases \(\S+-\d+-[0-9a-f]{6} 12\)/);
    const local = await cli(['sweep', plan, '--out-dir', join(dir, 'l'), '--no-idle', '--bootstrap', '200'], { env: { JOULEBENCH_HOME: home } });
    assert.equal(local.code, 0, local.stderr);
    const reportsOf = (d: string) =>
      readdirSync(d, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.json') && !f.endsWith('.receipt.json') && f.includes('/'))
        .sort();
    const q = reportsOf(join(dir, 'q'));
    assert.deepEqual(q, reportsOf(join(dir, 'l')));
    assert.ok(q.length >= 2);
    for (const f of q) {
      const a = JSON.parse(readFileSync(join(dir, 'q', f), 'utf8')) as { accuracy_pct: number; suite: unknown; case_count: number };
      const b = JSON.parse(readFileSync(join(dir, 'l', f), 'utf8')) as { accuracy_pct: number; suite: unknown; case_count: number };
      assert.deepEqual([a.accuracy_pct, a.case_count, a.suite], [b.accuracy_pct, b.case_count, b.suite], f);
    }
    assert.ok(JSON.parse(readFileSync(join(dir, 'q', 'comparison.json'), 'utf8')));
    const all = [queued.stdout, queued.stderr, ...readdirSync(join(dir, 'q'), { recursive: true }).map(String).filter((f) => /\.(json|jsonl)$/.test(f)).map((f) => readFileSync(join(dir, 'q', f), 'utf8'))].join('\n');
    assert.ok(!all.includes('sweep-q-pw-91'), 'the queue password leaked');
  });
});
