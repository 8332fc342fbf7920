import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BIN } from '../helpers/cli.js';
import { inProcess, linesOf } from '../helpers/in-process.js';
import { writeCorpus, type FuzzCase } from '../fuzz/corpus.js';

/**
 * A seeded corpus of ~300 malformed suites and configs. Each must end in exit 2, exactly one stderr
 * line naming the file, no stack trace, within 10 s. Most run through the CLI's own `main` in this
 * process (the entry the binary calls); a spread subset is spawned as the real binary to prove it
 * behaves the same. JOULEBENCH_FUZZ_SEED=N replays a seed (or `random` for a new one each run).
 */
const SEED_ENV = process.env.JOULEBENCH_FUZZ_SEED;
const SEED = SEED_ENV === 'random' ? Math.floor(Math.random() * 2 ** 32) : SEED_ENV ? Number(SEED_ENV) : 20261201;
const COUNT = Number(process.env.JOULEBENCH_FUZZ_COUNT ?? 300);
const SPAWNED = 30;
const LIMIT_MS = 10_000;

const dir = mkdtempSync(join(tmpdir(), 'jb-fuzz-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const corpus = writeCorpus(join(dir, 'corpus'), SEED, COUNT, join(dir, 'no-such-suite.json'));

function check(c: FuzzCase, r: { code: number | null; stderr: string; stdout: string }, ms: number, how: string): void {
  const ctx = `${how} ${c.label} (replay: JOULEBENCH_FUZZ_SEED=${SEED}); stderr: ${JSON.stringify(r.stderr.slice(0, 600))}`;
  assert.equal(r.code, 2, `exit ${r.code}: ${ctx}`);
  const lines = linesOf(r.stderr);
  assert.equal(lines.length, 1, `${lines.length} lines: ${ctx}`);
  assert.ok(r.stderr.endsWith('\n'), `no final newline: ${ctx}`);
  assert.ok(lines[0]!.startsWith('joulebench: '), ctx);
  assert.ok(lines[0]!.includes(c.names), `does not name ${c.names}: ${ctx}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error|RangeError|TypeError/, ctx);
  assert.doesNotMatch(lines[0]!, /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, `raw control character: ${ctx}`);
  assert.ok(lines[0]!.length <= 1200, `${lines[0]!.length} characters: ${ctx}`);
  assert.equal(r.stdout, '', ctx);
  assert.ok(ms < LIMIT_MS, `${Math.round(ms)} ms: ${ctx}`);
}

function spawnCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS * 3);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe(`fuzz: ${COUNT} malformed suites and configs (seed ${SEED})`, () => {
  it('through main, in process: exit 2, one line naming the file, no stack, < 10 s each', async () => {
    for (const c of corpus) {
      const t0 = performance.now();
      const r = await inProcess(c.args, { JOULEBENCH_HOME: dir });
      check(c, r, performance.now() - t0, 'in-process');
    }
  });

  it(`the real binary on ${SPAWNED} of them (spread over the corpus): the same`, { timeout: 300_000 }, async () => {
    const step = Math.max(1, Math.floor(corpus.length / SPAWNED));
    const subset = corpus.filter((_, i) => i % step === 0).slice(0, SPAWNED);
    // Two at a time: enough to halve the wall time, few enough for a loaded 2-core machine.
    for (let i = 0; i < subset.length; i += 2) {
      await Promise.all(
        subset.slice(i, i + 2).map(async (c) => {
          const t0 = performance.now();
          const r = await spawnCli(c.args);
          // Spawned start-up on a loaded machine is slow: the 10 s bound is for the work, so allow start-up on top.
          check(c, r, performance.now() - t0 - 2000, 'spawned');
        }),
      );
    }
  });
});
