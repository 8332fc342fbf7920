import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runSession, type SessionSpec } from '../../src/index.js';
import { METERS } from '../../src/meters/registry.js';
import { TARGETS } from '../../src/targets/registry.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { writeMtBench } from '../judge/mt-bench-data.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-session-resources-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What the session opened and closed, in order: `open target`, `close meter`… */
const events: string[] = [];

// A target and a meter whose opening and closing are recorded: the echo backend and the model meter underneath.
for (const role of ['target', 'judge']) {
  TARGETS[`recorded-${role}`] = {
    summary: `the echo backend, its opening and closing recorded (${role})`,
    async create() {
      const t = await TARGETS.echo!.create({ kind: 'echo' });
      events.push(`open ${role}`);
      return { ...t, close: async () => void events.push(`close ${role}`) };
    },
  };
}
METERS['recorded'] = {
  summary: 'the model meter, its opening and closing recorded',
  async create(opts) {
    const m = await METERS.model!.create(opts);
    events.push('open meter');
    return { ...m, close: async () => void events.push('close meter') };
  },
};

const load: SessionSpec['load'] = { request_rate: 1, burstiness: 1, seed: 0, max_concurrency: null, percentiles: [50], slo: null, ttft_token: 'content' };
const base: SessionSpec = { suite: 'router', target: 'recorded-target', meter: 'recorded', idle_ms: 0, history: false };

test('runSession refuses bad arguments before it opens a target, a meter or a file', async () => {
  const unfinished = join(dir, 'unfinished.results.jsonl');
  writeFileSync(unfinished, '');
  const bad: [SessionSpec, RegExp][] = [
    [{ ...base, resume: true }, /--resume needs the results file/],
    [{ ...base, resume: join(dir, 'missing.results.jsonl') }, /no such file to resume/],
    [{ ...base, resume: unfinished, results: join(dir, 'other.results.jsonl') }, /name different files/],
    [{ ...base, resume: unfinished, load }, /--resume cannot continue a load run/],
    [{ ...base, concurrency: 2, load }, /--concurrency is the closed-loop mode/],
    [{ ...base, out: join(dir, 'r.json'), results: dir }, /--results/],
  ];
  for (const [spec, message] of bad) {
    events.length = 0;
    await assert.rejects(runSession(spec), message);
    assert.deepEqual(events, [], `${message}: opened before the arguments were checked`);
  }
  assert.deepEqual(readdirSync(dir).sort(), ['unfinished.results.jsonl']);
});

test('an error thrown mid-run closes the target, the meter and the judge, each once', async () => {
  mkdirSync(join(dir, 'mt'));
  const files = writeMtBench(join(dir, 'mt'));
  const aborter = new AbortController();
  events.length = 0;
  let seen = 0;
  await assert.rejects(
    runSession(
      {
        ...base,
        suite: 'mt-bench',
        data: files.questions,
        warmup: 0,
        config: { where: 'judge.yaml', config: { judge: { kind: 'recorded-judge', cache: join(dir, 'mt', 'judgements.jsonl') } } },
        results: join(dir, 'mt', 'r.results.jsonl'),
      },
      { signal: aborter.signal, onResult: () => void (++seen === 3 && aborter.abort()) },
    ),
    (e: Error & { code?: string }) => e.code === 'E_RUN',
  );
  assert.equal(seen, 3);
  assert.deepEqual(events.slice(0, 3), ['open judge', 'open target', 'open meter']);
  assert.deepEqual(events.slice(3).sort(), ['close judge', 'close meter', 'close target']);
});

test('a judge meter that cannot read closes the judge target before the session opens anything else', async () => {
  mkdirSync(join(dir, 'jm'));
  const files = writeMtBench(join(dir, 'jm'));
  const powercap = join(dir, 'jm', 'no-powercap');
  mkdirSync(powercap);
  events.length = 0;
  await assert.rejects(
    runSession({
      ...base,
      suite: 'mt-bench',
      data: files.questions,
      config: { where: 'judge.yaml', config: { judge: { kind: 'recorded-judge', cache: join(dir, 'jm', 'judgements.jsonl') } } },
      results: join(dir, 'jm', 'r.results.jsonl'),
      judgeMeter: 'rapl',
      judgeMeterOptions: { powercap_root: powercap },
    }),
    (e: Error & { code?: string }) => e.code === 'E_METER',
  );
  assert.deepEqual(events, ['open judge', 'close judge']);
});

test('joulebench run --resume without a results file exits 2 before it opens the meter or sends a request', async () => {
  const server = await startFakeOpenAI(() => ({ kind: 'plain', text: 'x' }));
  try {
    const cwd = join(dir, 'cli');
    const powercap = join(dir, 'no-powercap');
    mkdirSync(cwd);
    mkdirSync(powercap);
    // RAPL cannot read from an empty powercap folder: a meter opened first would fail the run with E_METER instead.
    const r = await cli(['run', '-q', '--no-history', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--meter', 'rapl', '--powercap-root', powercap, '--resume'], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^joulebench: --resume needs the results file to continue/);
    assert.equal(server.seen.length, 0);
    assert.equal(existsSync(join(cwd, '.joulebench')), false);
  } finally {
    await server.close();
  }
});
