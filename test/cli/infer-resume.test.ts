import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { summariseFile, type InferRunFile } from '../../src/infer/protocol.js';
import type { InferArm } from '../../src/infer/types.js';
import { BIN, cli as runCli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-infer-resume-'));
const home = join(dir, 'home');
const env = { JOULEBENCH_HOME: home };
const cli = (args: string[]) => runCli(args, { cwd: dir, env });

/** Per arm: 1 cold + 1 warmup + 2 scored = 4 generations; three arms (default, t=2, t=3). */
const PER_ARM = 4;
const decode: Record<string, number> = { default: 20, '2': 25, '3': 30 };

describe('joulebench infer: a run killed mid-sweep keeps every finished run and resumes', () => {
  let killAt = -1;
  let child: ChildProcess | null = null;
  const fake = new FakeOllama({
    models: { m1: { parameter_count: 1e6 } },
    load_ms: 5,
    prefill_ms_per_token: 0.05,
    decode_tok_s: (t) => decode[String(t ?? 'default')]!,
    onGeneration: (n) => {
      if (n === killAt) child?.kill('SIGKILL');
    },
  });
  let url = '';
  before(async () => {
    url = await fake.start();
  });
  after(async () => {
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const args = (out: string, extra: string[] = []) => [
    'infer', '--model', 'm1', '--base-url', url, '--threads', 'default,2,3', '--cold', '1', '--warmup', '1', '--runs', '2',
    '--num-predict', '3', '--gpu-snapshot-cmd', '', '--meter', 'none', '--peak-flops', '1e11', '-q', '--out', out, ...extra,
  ];
  const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown> & { event: string });

  const killed = join(dir, 'killed.json');
  const journal = `${killed}.partial.jsonl`;
  let journalArm1: InferArm | null = null;

  it('SIGKILL during the second arm leaves a journal with every finished run and the first arm whole', async () => {
    // The kill lands as the second arm's third request (its first scored run) reaches the server.
    killAt = fake.generations + PER_ARM + 3;
    const code = await new Promise<number | string | null>((resolve, reject) => {
      child = spawn(process.execPath, [BIN, ...args(killed)], { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: 'ignore' });
      child.on('error', reject);
      child.on('exit', (c, sig) => resolve(sig ?? c));
    });
    assert.equal(code, 'SIGKILL', 'the run was killed, not finished');
    assert.equal(existsSync(killed), false, 'no run file from a killed run');
    const ev = lines(journal);
    assert.equal(ev[0]!.event, 'header');
    const runs = ev.filter((e) => e.event === 'run').map((e) => `${e.arm as string}:${(e.run as { phase: string }).phase}`);
    assert.deepEqual(runs, ['m1@t=default:cold', 'm1@t=default:warmup', 'm1@t=default:scored', 'm1@t=default:scored', 'm1@t=2:cold', 'm1@t=2:warmup']);
    const arms = ev.filter((e) => e.event === 'arm');
    assert.equal(arms.length, 1, 'one whole arm');
    journalArm1 = arms[0]!.arm as InferArm;
    assert.equal(journalArm1.id, 'm1@t=default');
    assert.equal(journalArm1.runs.length, 2);
  });

  it('a resume with a different prompt, thread list or base URL is refused with one line naming it (exit 2)', async () => {
    const promptFile = join(dir, 'other-prompt.txt');
    writeFileSync(promptFile, 'a different frozen prompt');
    const before = fake.generations;
    const prompt = await cli([...args(killed, ['--resume', '--prompt-file', promptFile])]);
    assert.equal(prompt.code, 2, prompt.stderr);
    assert.match(prompt.stderr, /^joulebench: --resume: .*killed\.json\.partial\.jsonl was written for a different run \(prompt sha256 [0-9a-f]{12}… in the journal, [0-9a-f]{12}… now\)/);
    assert.equal(prompt.stderr.trim().split('\n').length, 1, 'one line');
    const threads = await cli([...args(killed, ['--resume', '--threads', '2'])]);
    assert.equal(threads.code, 2);
    assert.match(threads.stderr, /threads default,2,3 in the journal, 2 now/);
    const base = await cli([...args(killed, ['--resume', '--base-url', 'http://127.0.0.1:9'])]);
    assert.equal(base.code, 2);
    assert.match(base.stderr, /base URL http:\/\/127\.0\.0\.1:\d+ in the journal, http:\/\/127\.0\.0\.1:9 now/);
    // Without --resume, the journal is not overwritten.
    const fresh = await cli(args(killed));
    assert.equal(fresh.code, 2);
    assert.match(fresh.stderr, /unfinished run's journal is here: add --resume/);
    assert.equal(fake.generations, before, 'nothing was sent');
  });

  it('--resume keeps the finished arm, re-runs the interrupted one from cold, and matches an uninterrupted run', async () => {
    const beforeGen = fake.generations;
    const r = await cli([...args(killed, ['--resume'])]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fake.generations - beforeGen, 2 * PER_ARM, 'the first arm is not re-run; the second re-runs whole');
    assert.equal(existsSync(journal), false, 'the journal is removed once the run file is written');
    const resumed = JSON.parse(readFileSync(killed, 'utf8')) as InferRunFile;
    assert.deepEqual(resumed.arms[0], journalArm1, 'the finished arm is the journal\'s, untouched');
    assert.deepEqual(resumed.receipts.resumes.map((x) => [x.finished_arms_kept, x.partial_arms_discarded]), [[['m1@t=default'], [{ arm: 'm1@t=2', runs_discarded: 2 }]]]);
    assert.equal(resumed.arms[1]!.cold_load[0]!.unload?.keep_alive_0, true, 'the re-run arm starts with a cold run');

    const whole = join(dir, 'whole.json');
    const w = await cli(args(whole));
    assert.equal(w.code, 0, w.stderr);
    const uninterrupted = JSON.parse(readFileSync(whole, 'utf8')) as InferRunFile;
    const shape = (f: InferRunFile) => f.arms.map((a) => [a.id, a.cold_load.length, a.warmup_discarded.length, a.runs.length, a.runs.map((x) => x.decode_tok_s)]);
    assert.deepEqual(shape(resumed), shape(uninterrupted));
    assert.equal(resumed.prompt_sha256, uninterrupted.prompt_sha256);
    assert.deepEqual(resumed.receipts.transforms.counts, uninterrupted.receipts.transforms.counts);
    assert.deepEqual(uninterrupted.receipts.resumes, []);
    // Summaries come from the same rule: recomputing from the arms gives what the file says.
    const recompute = (f: InferRunFile) => summariseFile(f.arms, f.receipts.machine_peak.configured, f.receipts.machine_peak.cpu_default);
    assert.deepEqual(resumed.summary, recompute(resumed));
    const decodeMedians = (f: InferRunFile) => f.summary.arms.map((a) => [a.id, a.stats?.decode_tok_s_median.value]);
    assert.deepEqual(decodeMedians(resumed), decodeMedians(uninterrupted));
    assert.deepEqual(resumed.summary.thread_sweeps.map((s) => [s.best_arm, s.best_over_default.value]), [['m1@t=3', 1.5]]);
    assert.deepEqual(uninterrupted.summary.thread_sweeps.map((s) => [s.best_arm, s.best_over_default.value]), [['m1@t=3', 1.5]]);
    assert.ok(resumed.started_utc < resumed.arms[1]!.started_utc, 'started_utc is the first attempt\'s');
  });

  it('a model gone mid-run: one line naming the failure and how to resume, exit 1, finished runs kept', async () => {
    const out = join(dir, 'gone.json');
    const model = fake.opts.models.m1!;
    const stopAt = fake.generations + PER_ARM + 2;
    const saved = fake.opts.onGeneration;
    fake.opts.onGeneration = (n) => {
      if (n === stopAt) delete fake.opts.models.m1;
    };
    const r = await cli(args(out));
    fake.opts.onGeneration = saved;
    fake.opts.models.m1 = model;
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^joulebench: ollama .*model 'm1' not found; 6 finished runs \(1 whole arms\) kept in .*gone\.json\.partial\.jsonl; to continue, run the same command with --out .*gone\.json --resume$/m);
    const ev = lines(`${out}.partial.jsonl`);
    assert.equal(ev.filter((e) => e.event === 'run').length, 6);
    assert.equal(ev.at(-1)!.event, 'failed');
    const again = await cli([...args(out, ['--resume'])]);
    assert.equal(again.code, 0, again.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8')) as InferRunFile;
    assert.deepEqual(file.arms.map((a) => a.runs.length), [2, 2, 2]);
  });

  it('Ctrl-C (SIGINT) mid-run: exit 130 with one line saying what is kept and how to resume', async () => {
    const out = join(dir, 'interrupted.json');
    killAt = fake.generations + 3;
    let stderr = '';
    const code = await new Promise<number | string | null>((resolve, reject) => {
      const c = spawn(process.execPath, [BIN, ...args(out)], { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
      child = { kill: () => c.kill('SIGINT') } as unknown as ChildProcess;
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('error', reject);
      c.on('exit', (x, sig) => resolve(sig ?? x));
    });
    killAt = -1;
    assert.equal(code, 130, stderr);
    // The signal is handled between requests; on a loaded machine more may finish before it lands.
    const m = /^joulebench: interrupted; (\d+) finished runs \(\d+ whole arms?\) kept in .*interrupted\.json\.partial\.jsonl; to continue, run the same command with --out .*interrupted\.json --resume\n$/.exec(stderr);
    assert.ok(m, `one line naming what is kept and how to resume: ${stderr}`);
    assert.ok(Number(m[1]) >= 2 && Number(m[1]) < 12, `between 2 finished runs and the whole sweep, said ${m[1]}`);
    assert.equal(lines(`${out}.partial.jsonl`).filter((e) => e.event === 'run').length, Number(m[1]), 'the line counts what the journal holds');
  });
});
