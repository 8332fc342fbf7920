/**
 * The runner's cost next to what it measures: 100,000 generated cases (cache, KV and graph hits)
 * through the reference cascade, by the full runner (scoring, energy, the results JSONL written
 * line by line, aggregation) and by a bare loop calling the same stages directly, alternated in one
 * process so both see the same machine. Prints cases/s, overhead per case and the ratio, on CPU time
 * (user + system of this process, which a busy neighbour on a shared machine does not inflate) and
 * on wall time.
 *
 *   npm run bench            (or: node --import tsx bench/cascade.bench.ts [cases] [trials])
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Case, Suite } from '../src/core/types.js';
import { median } from '../src/core/stats.js';
import { run } from '../src/runner/run.js';
import { JsonlResultsFile, type ResultsSink } from '../src/runner/results-file.js';
import { suiteDigest } from '../src/suites/digest.js';
import { loadSuite } from '../src/suites/loader.js';
import { promptOf } from '../src/suites/prompt.js';
import { createReferenceCascade } from '../src/targets/cascade/reference.js';

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
  for (const c of cases) {
    const prompt = promptOf(c);
    const req = { prompt, case: c }; // one request a case, as the cascade passes it to each stage
    for (let i = 0; i < stages.length; i++) {
      const r = stages[i]!.tryAnswer(prompt, req);
      if (r instanceof Promise) throw new Error('bench expects only synchronous hits');
      if (r.text !== null) {
        // As the cascade does: earlier stages that observe (the cache) see the answer.
        for (let j = 0; j < i; j++) (stages[j] as Partial<Observer>).observe?.(prompt, r.text, stages[i]!.id);
        hits++;
        break;
      }
    }
  }
  const t = stop();
  if (hits !== N) throw new Error(`bare loop: ${hits} hits of ${N}`);
  return t;
}

const dir = mkdtempSync(join(tmpdir(), 'jb-bench-'));
let resultsBytes = 0;
let trial = 0;
async function runner(): Promise<Timing> {
  const cascade = await warmCascade();
  // A new file each trial, as a first run writes one; the last trial's is removed untimed (overwriting
  // it would time the kernel freeing 50 MB of page cache, which no loop here causes).
  const path = join(dir, `results-${trial++}.jsonl`);
  rmSync(join(dir, `results-${trial - 2}.jsonl`), { force: true });
  const stop = timer();
  // As the CLI runs it: results streamed to the JSONL file, not kept in memory.
  const sink = new JsonlResultsFile(path);
  // The report's bootstrap intervals (issue 13) are off here: they cost O(resamples × cases) once, after
  // the loop (seconds for these 100k in-memory cases, nothing beside a real target's time), not per case.
  const out = await run({ suite, target: cascade, sink, warmup: 0, keepResults: false, bootstrap: 0 });
  sink.close();
  const t = stop();
  resultsBytes = statSync(path).size;
  if (out.report.stage_distribution.neural !== 0) throw new Error('bench cases must not reach neural');
  return t;
}

/** The runner with results discarded: the difference to `runner` is what writing the file costs. */
async function runnerNoFile(): Promise<Timing> {
  const cascade = await warmCascade();
  const discard: ResultsSink = { header() {}, write() {}, note() {}, close() {} };
  const stop = timer();
  await run({ suite, target: cascade, sink: discard, warmup: 0, keepResults: false, bootstrap: 0 });
  return stop();
}

/** The suite digest alone (the runner computes it once a run, before the first case). */
async function digestOnly(): Promise<Timing> {
  const stop = timer();
  suiteDigest(suite);
  return stop();
}

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
// Where the runner's time goes, alternated with the bare loop the same way (fewer trials).
const partT: { bare: Timing; noFile: Timing; digest: Timing }[] = [];
for (let t = 0; t < Math.min(TRIALS, 5); t++) partT.push({ bare: await bare(), noFile: await runnerNoFile(), digest: await digestOnly() });
rmSync(dir, { recursive: true, force: true });

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`joulebench runner benchmark: ${fmt(N)} cases (cache/KV/graph hits), median of ${TRIALS} alternated trials, Node ${process.version}`);
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
  console.log(`  ratio runner / bare loop            ${ratio.toFixed(2)}×   (median of paired trials; goal ≤ 1.5× (issue 19), ≥ 50,000 cases/s)`);
}
// Each part over the bare trial just before it; absolute times drift between these and the main trials.
const partRatio = (k: 'noFile' | 'digest') => median(partT.map((p) => p[k].cpu_ms / p.bare.cpu_ms))!;
const fullRatio = median(runT.map((t, i) => t.cpu_ms / bareT[i]!.cpu_ms))!;
console.log("where the runner's CPU time goes, in bare loops (median of paired trials):");
console.log(`  runner with results discarded        ${partRatio('noFile').toFixed(2)}×   so writing the results file ≈ ${(fullRatio - partRatio('noFile')).toFixed(2)}×`);
console.log(`  of which the suite digest            ${partRatio('digest').toFixed(2)}×`);
const mem = process.memoryUsage();
console.log(`results file ${(resultsBytes / 1e6).toFixed(1)} MB; process memory rss ${(mem.rss / 1e6).toFixed(0)} MB, heap used ${(mem.heapUsed / 1e6).toFixed(0)} MB`);
