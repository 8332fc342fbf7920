/**
 * The runner's own cost a case when the target answers asynchronously, as every networked target
 * (openai, ollama, a cascade's neural stage) does — without a network, whose noise on this shared
 * machine (±20 % between trials in `bench:http`) hides differences of a microsecond. The target is an
 * in-process one that answers each case on the next microtask with a fixed Answer (tokens, no energy),
 * so the figures are the runner's alone. Arms, alternated in each round in one process:
 *
 * - **bare**: `await target.answer(req)` for each case: the target's own promise, nothing else;
 * - **runner, no file**: `run()` (src/runner/run.ts) as `joulebench run` calls it for a closed-loop
 *   run (meter `model`, an abort signal, bootstrap off), results discarded;
 * - **runner**: the same with the results JSONL written to disk by the CLI's `JsonlResultsFile`;
 * - **before** (with `BENCH_BEFORE_DIST=/path/to/other/dist`): another build's runner with its file,
 *   in the same rounds, for before/after figures at the same load.
 *
 * CPU time (user + system) of this process, µs a case: the median over rounds after two untimed
 * ones; ratios are each round's pair, then the median. `C=8` runs the runner at concurrency 8.
 *
 *   npm run bench:async      (or: node --import tsx bench/async-runner.bench.ts [cases] [rounds])
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Answer, Case, Suite, Target } from '../src/core/types.js';

const DIST = new URL('../dist/', import.meta.url).href;
type Build = {
  run: typeof import('../src/runner/run.js').run;
  createModelMeter: typeof import('../src/meters/model.js').createModelMeter;
  JsonlResultsFile: typeof import('../src/runner/results-file.js').JsonlResultsFile;
};
const load = async (base: string): Promise<Build> => ({
  run: ((await import(`${base}runner/run.js`)) as typeof import('../src/runner/run.js')).run,
  createModelMeter: ((await import(`${base}meters/model.js`)) as typeof import('../src/meters/model.js')).createModelMeter,
  JsonlResultsFile: ((await import(`${base}runner/results-file.js`)) as typeof import('../src/runner/results-file.js')).JsonlResultsFile,
});
const now = await load(DIST);
const BEFORE = process.env.BENCH_BEFORE_DIST ? new URL(`${process.env.BENCH_BEFORE_DIST.replace(/\/?$/, '/')}`, 'file:///').href : null;
const before = BEFORE ? await load(BEFORE) : null;
const { median } = (await import(`${DIST}core/stats.js`)) as typeof import('../src/core/stats.js');

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 9);
const C = Number(process.env.C ?? 1);
const prompt = 'Which letter? A. x B. y C. z D. w\nAnswer:';
const cases: Case[] = Array.from({ length: N }, (_, i) => ({ id: `c${i}`, dataset: 'bench', prompt, expected: 'B', weight: 1, tags: [] }));
const suite: Suite = { name: 'bench', version: '1', scorer: 'substring', source: 'generated', cases };

/** Answers on the next microtask, as a networked target's promise settles; a new Answer each case, as a real one makes. */
const target: Target = {
  kind: 'async-fake',
  id: 'async-fake',
  describe: () => ({ kind: 'async-fake' }),
  async answer(): Promise<Answer> {
    await null;
    return { text: 'B', stage: 'neural', usage: { prompt_tokens: 50, completion_tokens: 1 }, ttft_ms: null, tpot_ms: null, cost_usd: null, attempts: 1 };
  },
};
const dir = mkdtempSync(join(tmpdir(), 'jb-async-bench-'));
const discard = { header() {}, write() {}, note() {}, close() {} };
const cpu_us = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
let fileNo = 0;

async function bare(): Promise<number> {
  const signal = new AbortController().signal;
  const c0 = cpu_us();
  for (let i = 0; i < N; i++) await target.answer({ prompt, case: cases[i]!, signal });
  return (cpu_us() - c0) / N;
}

async function viaRun(b: Build, file: boolean): Promise<number> {
  const path = join(dir, `r${fileNo++}.jsonl`);
  const c0 = cpu_us();
  const sink = file ? new b.JsonlResultsFile(path) : discard;
  const out = await b.run({ suite, target, meter: b.createModelMeter(), sink, warmup: 0, idle_ms: 0, keepResults: false, bootstrap: 0, concurrency: C, signal: new AbortController().signal });
  sink.close();
  const t = (cpu_us() - c0) / N;
  rmSync(path, { force: true });
  if (out.report.correct_count !== N) throw new Error(`runner: ${out.report.correct_count} of ${N} correct`);
  return t;
}

type Round = { bare: number; noFile: number; run: number; before: number | null };
const rounds: Round[] = [];
const load0 = loadavg()[0]!;
for (let r = 0; r < ROUNDS + 2; r++) {
  // The two builds' arms swap places every other round, so neither always follows the other.
  const b0 = before && r % 2 === 1 ? await viaRun(before, true) : null;
  const round: Round = { bare: await bare(), noFile: await viaRun(now, false), run: await viaRun(now, true), before: b0 ?? (before ? await viaRun(before, true) : null) };
  if (r >= 2) rounds.push(round);
}
rmSync(dir, { recursive: true, force: true });
const med = (f: (r: Round) => number): number => median(rounds.map(f))!;
console.log(`joulebench runner with an asynchronous target: ${N.toLocaleString('en-US')} cases, concurrency ${C}, median of ${ROUNDS} rounds, Node ${process.version}, load average ${load0.toFixed(1)} → ${loadavg()[0]!.toFixed(1)}`);
console.log(`  bare await loop                 ${med((r) => r.bare).toFixed(2)} µs/case`);
console.log(`  runner, results discarded       ${med((r) => r.noFile).toFixed(2)} µs/case   runner's own ${med((r) => r.noFile - r.bare).toFixed(2)} µs/case`);
console.log(`  runner + results JSONL          ${med((r) => r.run).toFixed(2)} µs/case   the file ${med((r) => r.run - r.noFile).toFixed(2)} µs/case`);
if (before) console.log(`  before (${process.env.BENCH_BEFORE_DIST}) + JSONL  ${med((r) => r.before!).toFixed(2)} µs/case   now/before ${med((r) => r.run / r.before!).toFixed(3)}×`);
