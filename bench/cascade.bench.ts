/**
 * The runner's cost next to what it measures. 100,000 generated cases (cache, KV and graph hits of the reference cascade, each case its own
 * id) go through two arms, alternated in one process so both see the same machine:
 *
 * - **bare loop**: the cascade's stages called directly on the same cases: the prompt, one request
 *   object a case, each stage tried in order until one answers, earlier observing stages (the cache)
 *   shown the answer, as the cascade does. No harness at all: no trace, result object, score, file.
 * - **runner**: `run()` (src/runner/run.ts), the function `runSession` and so `joulebench run` call
 *   for a closed-loop run, exactly as the CLI calls it: the suite digest and results header, the
 *   reference cascade as the target (its per-stage trace and modelled energy), the `model` meter, the
 *   clock around each case, scoring, every result line encoded and written to a new results JSONL on
 *   disk by the CLI's `JsonlResultsFile`, the CLI's per-case progress hook (no bar: stderr is not a
 *   terminal here, as in CI), aggregation and the report. Not in it: reading the suite (the cases are
 *   in memory, as a bundled suite's are; reading a JSONL suite is `bench:scale`'s), the report's
 *   bootstrap (`--bootstrap 0`: B × n resamples once after the loop), and the receipt, history row
 *   and report file (one each a run).
 *
 * The figure is CPU time (user + system of this process, which a busy neighbour on a shared machine
 * does not inflate; wall time is printed too): after two untimed rounds of each arm, the median over
 * the trials of each runner trial over the bare trial just before it. A breakdown follows, each part
 * paired with a bare-loop trial the same way, in bare loops: the runner with its results discarded,
 * the target alone (`cascade.answer`: the bare loop plus the cascade's trace and energy sums), the
 * suite digest, the result lines' encoding, and the aggregation with its report.
 *
 *   npm run bench            (or: node --import tsx bench/cascade.bench.ts [cases] [trials])
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os, { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Case, CaseResult, Stage, Suite } from '../src/core/types.js';
import type { ResultsSink } from '../src/runner/results-file.js';

// The built code (`npm run bench` builds first), as the CLI runs it: the TypeScript loader's output
// for src/ differs (it names every closure it creates, a cost per request on the HTTP path).
const DIST = new URL('../dist/', import.meta.url).href;
const { median } = (await import(`${DIST}core/stats.js`)) as typeof import('../src/core/stats.js');
const { Aggregator } = (await import(`${DIST}core/aggregate.js`)) as typeof import('../src/core/aggregate.js');
const { caseLine } = (await import(`${DIST}runner/case-line.js`)) as typeof import('../src/runner/case-line.js');
const { run } = (await import(`${DIST}runner/run.js`)) as typeof import('../src/runner/run.js');
const { JsonlResultsFile } = (await import(`${DIST}runner/results-file.js`)) as typeof import('../src/runner/results-file.js');
const { suiteDigest } = (await import(`${DIST}suites/digest.js`)) as typeof import('../src/suites/digest.js');
const { loadSuite } = (await import(`${DIST}suites/loader.js`)) as typeof import('../src/suites/loader.js');
const { promptOf } = (await import(`${DIST}suites/prompt.js`)) as typeof import('../src/suites/prompt.js');
const { createReferenceCascade } = (await import(`${DIST}targets/cascade/reference.js`)) as typeof import('../src/targets/cascade/reference.js');

const N = Number(process.argv[2] ?? 100_000);
const TRIALS = Number(process.argv[3] ?? 9);

// Cases that hit cache, KV and graph: the router's non-neural cases, cycled with unique ids.
const router = loadSuite('router');
const hitting = router.cases.filter((c) => !c.id.startsWith('rt-neural-'));
const cases: Case[] = Array.from({ length: N }, (_, i) => {
  const base = hitting[i % hitting.length]!;
  return { ...base, id: `${base.id}#${i}` };
});
const suite: Suite = { name: 'bench', version: '1', scorer: 'substring', source: 'generated', cases };
const echoPrompts = hitting.filter((c) => c.id.startsWith('rt-cache-')).map((c) => c.prompt!);

/** A reference cascade whose cache already holds the echo prompts (as after a warmup pass). */
async function warmCascade() {
  const cascade = createReferenceCascade();
  for (const p of echoPrompts) await cascade.answer({ prompt: p, case: cases[0]! });
  return cascade;
}

interface Observer {
  observe(prompt: string, text: string, stageId: string): void;
}

interface Timing {
  wall_ms: number;
  cpu_ms: number;
}

function timer(): () => Timing {
  const w0 = performance.now();
  const c0 = process.cpuUsage();
  return () => {
    const c = process.cpuUsage(c0);
    return { wall_ms: performance.now() - w0, cpu_ms: (c.user + c.system) / 1000 };
  };
}

async function bare(): Promise<Timing> {
  const cascade = await warmCascade();
  const stages = cascade.stages;
  const stop = timer();
  let hits = 0;
  for (const c of cases) if (stagesAnswer(stages, c)) hits++;
  const t = stop();
  if (hits !== N) throw new Error(`bare loop: ${hits} hits of ${N}`);
  return t;
}

/** One case through the stages as the cascade walks them, nothing else; whether a stage answered. */
function stagesAnswer(stages: readonly Stage[], c: Case): boolean {
  const prompt = promptOf(c);
  const req = { prompt, case: c }; // one request a case, as the cascade passes it to each stage
  for (let i = 0; i < stages.length; i++) {
    const r = stages[i]!.tryAnswer(prompt, req);
    if (r instanceof Promise) throw new Error('bench expects only synchronous hits');
    if (r.text !== null) {
      // As the cascade does: earlier stages that observe (the cache) see the answer.
      for (let j = 0; j < i; j++) (stages[j] as Partial<Observer>).observe?.(prompt, r.text, stages[i]!.id);
      return true;
    }
  }
  return false;
}

const dir = mkdtempSync(join(tmpdir(), 'jb-bench-'));
let resultsBytes = 0;
let trial = 0;
let floorTrial = 0;

/** The CLI's per-case hook (src/cli/commands/run.ts): a progress bar only when stderr is a terminal. */
const progress = null as { update(done: number): void } | null;
const onResult = (_r: CaseResult, p: { done: number }): void => progress?.update(p.done);

async function runner(): Promise<Timing> {
  const cascade = await warmCascade();
  // A new file each trial, as a first run writes one; the last trial's is removed untimed (overwriting
  // it would time the kernel freeing 50 MB of page cache, which no loop here causes).
  const path = join(dir, `results-${trial++}.jsonl`);
  rmSync(join(dir, `results-${trial - 2}.jsonl`), { force: true });
  const stop = timer();
  // As the CLI runs it: results streamed to the JSONL file, not kept in memory.
  const sink = new JsonlResultsFile(path);
  // The report's bootstrap intervals are off here: they cost O(resamples × cases) once, after
  // the loop (seconds for these 100k in-memory cases, nothing beside a real target's time), not per case.
  const out = await run({ suite, target: cascade, sink, warmup: 0, keepResults: false, bootstrap: 0, onResult });
  sink.close();
  const t = stop();
  resultsBytes = statSync(path).size;
  if (out.report.stage_distribution.neural !== 0) throw new Error('bench cases must not reach neural');
  if (out.report.case_count !== N) throw new Error(`runner: ${out.report.case_count} cases of ${N}`);
  return t;
}

/** The runner with results discarded: the difference to `runner` is what writing the file costs. */
async function runnerNoFile(): Promise<Timing> {
  const cascade = await warmCascade();
  const discard: ResultsSink = { header() {}, write() {}, note() {}, close() {} };
  const stop = timer();
  await run({ suite, target: cascade, sink: discard, warmup: 0, keepResults: false, bootstrap: 0, onResult });
  return stop();
}

/** The target alone: `cascade.answer` on each case, which adds its trace and energy sums to the bare loop. */
async function targetOnly(): Promise<Timing> {
  const cascade = await warmCascade();
  const stop = timer();
  let hits = 0;
  for (const c of cases) {
    const a = cascade.answer({ prompt: promptOf(c), case: c });
    if (a instanceof Promise) throw new Error('bench expects only synchronous hits');
    if (a.stage !== 'none') hits++;
  }
  const t = stop();
  if (hits !== N) throw new Error(`target alone: ${hits} hits of ${N}`);
  return t;
}

/** The suite digest alone (the runner computes it once a run, before the first case). */
async function digestOnly(): Promise<Timing> {
  const stop = timer();
  suiteDigest(suite);
  return stop();
}

// Results as the runner makes them, for timing their encoding and aggregation alone. A ring of 1024
// is cycled (N lines each trial): in a run each result is encoded while it is fresh in the CPU's cache,
// which 100,000 results made beforehand would not be.
const RING = 1024;
const madeResults = (await run({ suite: { ...suite, cases: cases.slice(0, RING) }, target: await warmCascade(), warmup: 0, bootstrap: 0 })).results;
const lineBuffer = Buffer.allocUnsafe(1 << 20);

/** Encoding N result lines into the results file's buffer (as `JsonlResultsFile.write`), without the write. */
async function encodeOnly(): Promise<Timing> {
  const stop = timer();
  let at = 0;
  for (let i = 0; i < N; i++) {
    const r = madeResults[i % RING]!;
    const line = caseLine(r);
    if (at + line.length * 3 + 1 > lineBuffer.length) at = 0;
    at += lineBuffer.write(line, at);
    lineBuffer[at++] = 0x0a;
  }
  return stop();
}

/**
 * The floor of the goal: the bare loop plus only what any runner meeting it must do besides — the suite
 * digest (the header needs it) and each case's results line encoded and written to the file — with no
 * result object made, no trace, score, clock, progress or aggregation (each case writes a result made
 * beforehand). Were everything else free, the runner could be no faster than this.
 */
async function floorOnly(): Promise<Timing> {
  const cascade = await warmCascade();
  const stages = cascade.stages;
  const path = join(dir, `floor-${floorTrial++}.jsonl`);
  rmSync(join(dir, `floor-${floorTrial - 2}.jsonl`), { force: true });
  const stop = timer();
  const sink = new JsonlResultsFile(path);
  const digest = suiteDigest(suite);
  sink.header({ record: 'header', format: 'joulebench-results/1', suite: suite.name, suite_version: suite.version, suite_digest: digest, target: cascade.id, config_digest: digest, warmup: 0, repeats: 1, meter: 'model' });
  let hits = 0;
  for (let k = 0; k < N; k++) {
    if (stagesAnswer(stages, cases[k]!)) hits++;
    sink.write(madeResults[k % RING]!);
  }
  sink.close();
  const t = stop();
  if (hits !== N) throw new Error(`floor: ${hits} hits of ${N}`);
  return t;
}

/** Aggregating N results and building the report (bootstrap off), as the runner does. */
async function aggregateOnly(): Promise<Timing> {
  const stop = timer();
  const agg = new Aggregator({ concurrency: 1 });
  for (let i = 0; i < N; i++) agg.add(madeResults[i % RING]!);
  agg.report({ suite: { name: suite.name, version: suite.version, digest: 'sha256:-' }, target: 'bench', meter: 'model', warmup: 0, repeats: 1, concurrency: 1, bootstrap: 0, scored_wall_ms: 1 });
  return stop();
}

const load0 = loadavg();
// Two untimed rounds of each to let the JIT and the heap settle (the first timed runner trial after
// one round was still ~25 % slower than the rest), then alternate.
for (let warm = 0; warm < 2; warm++) {
  await bare();
  await runner();
}
const bareT: Timing[] = [];
const runT: Timing[] = [];
for (let t = 0; t < TRIALS; t++) {
  bareT.push(await bare());
  runT.push(await runner());
}
// Where the runner's time goes, each part paired with a bare-loop trial the same way (fewer trials).
type Part = 'full' | 'noFile' | 'target' | 'digest' | 'encode' | 'aggregate' | 'floor';
const partT: (Record<Part, Timing> & { bare: Timing })[] = [];
for (let t = 0; t < Math.min(TRIALS, 5); t++) {
  partT.push({ bare: await bare(), full: await runner(), noFile: await runnerNoFile(), target: await targetOnly(), digest: await digestOnly(), encode: await encodeOnly(), aggregate: await aggregateOnly(), floor: await floorOnly() });
}
rmSync(dir, { recursive: true, force: true });
const load1 = loadavg();

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`joulebench runner benchmark: ${fmt(N)} cases (cache/KV/graph hits), median of ${TRIALS} alternated trials, Node ${process.version}`);
console.log(`load average (1 min) ${load0[0]!.toFixed(1)} at the start, ${load1[0]!.toFixed(1)} at the end, on ${availableCores()} cores`);
for (const clock of ['cpu_ms', 'wall_ms'] as const) {
  const b = median(bareT.map((t) => t[clock]))!;
  const r = median(runT.map((t) => t[clock]))!;
  console.log(`${clock === 'cpu_ms' ? 'CPU time (user + system)' : 'wall time'}:`);
  console.log(`  bare loop (stages called directly)  ${b.toFixed(1).padStart(8)} ms  ${fmt((N / b) * 1000).padStart(10)} cases/s  ${((b / N) * 1000).toFixed(2)} µs/case`);
  console.log(`  runner + results JSONL + report     ${r.toFixed(1).padStart(8)} ms  ${fmt((N / r) * 1000).padStart(10)} cases/s  ${((r / N) * 1000).toFixed(2)} µs/case`);
  // Each runner trial over the bare trial just before it: the pair saw the same machine, so a busy
  // neighbour slowing one stretch of the run moves both sides of its ratio together.
  const ratio = median(runT.map((t, i) => t[clock] / bareT[i]![clock]))!;
  console.log(`  runner overhead per case            ${(((r - b) / N) * 1000).toFixed(2)} µs`);
  console.log(`  ratio runner / bare loop            ${ratio.toFixed(2)}×   (median of paired trials; goal ≤ 1.5×, ≥ 50,000 cases/s)`);
}
// Each part over the bare trial just before it; absolute times drift between these and the main trials.
const partRatio = (k: Part) => median(partT.map((p) => p[k].cpu_ms / p.bare.cpu_ms))!;
console.log("where the runner's CPU time goes, in bare loops (median of paired trials; the parts overlap the whole loosely):");
// The file's share from runs with and without it in the same rounds (the main trials ran at another time).
console.log(`  runner (again, in these rounds)      ${partRatio('full').toFixed(2)}×`);
console.log(`  runner with results discarded        ${partRatio('noFile').toFixed(2)}×   so writing the results file ≈ ${(partRatio('full') - partRatio('noFile')).toFixed(2)}×`);
console.log(`  the target alone (cascade.answer)    ${partRatio('target').toFixed(2)}×   (the bare loop + the cascade's trace and energy sums)`);
// Against the target as users run it (its trace and energy sums included), rather than its stages alone.
const overTarget = median(partT.map((p) => p.full.cpu_ms / p.target.cpu_ms))!;
console.log(`  so the runner over the target alone  ${overTarget.toFixed(2)}×   (each round's runner trial over its target-alone trial)`);
console.log(`  the suite digest                     ${partRatio('digest').toFixed(2)}×`);
console.log(`  encoding the result lines            ${partRatio('encode').toFixed(2)}×   (no write; the rest of the file's share is the kernel's copy)`);
console.log(`  aggregation and the report           ${partRatio('aggregate').toFixed(2)}×`);
// What no runner can avoid (the header's digest, a results line a case, written), everything else free.
console.log(`the floor: the bare loop + the suite digest + each results line encoded and written, nothing else: ${partRatio('floor').toFixed(2)}×   (the goal's 1.5× cannot be met below this)`);
const mem = process.memoryUsage();
console.log(`results file ${(resultsBytes / 1e6).toFixed(1)} MB; process memory rss ${(mem.rss / 1e6).toFixed(0)} MB, heap used ${(mem.heapUsed / 1e6).toFixed(0)} MB`);

function availableCores(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}
