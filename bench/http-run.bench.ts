/**
 * The whole run path against HTTP next to a bare client, in one process and one run: the `openai`
 * target as `joulebench run --target openai` drives it (the runner, the target with its retry loop,
 * the client, scoring, the results JSONL written to disk, aggregation) against a raw `http.request`
 * loop (keep-alive agent, body read and JSON-parsed), both at concurrency 1 and 32 against a minimal
 * loopback server in a child process, plain and streamed. Trials alternate (raw, run, raw, run, …)
 * and each ratio is the median over pairs of a run trial and the raw trial just before it.
 *
 * Also prints the harness's CPU per request (this process: user + system) next to the server's own
 * (the child reports its `process.cpuUsage()`), which on a server this cheap is the comparison
 * that says whether the harness is small next to what it measures.
 *
 *   npm run bench:http   (builds first; BENCH_N requests a trial, default 2000; BENCH_TRIALS pairs, default 7)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Case, Suite } from '../src/core/types.js';
import { startMinimalServer } from './minimal-server.js';

// The built code (the script builds first), as `joulebench run` runs it: the TypeScript loader's
// output for src/ names every closure it creates, ≈ 10 % more CPU a request on this path.
const DIST = new URL('../dist/', import.meta.url).href;
const { median } = (await import(`${DIST}core/stats.js`)) as typeof import('../src/core/stats.js');
const { createModelMeter } = (await import(`${DIST}meters/model.js`)) as typeof import('../src/meters/model.js');
const { JsonlResultsFile } = (await import(`${DIST}runner/results-file.js`)) as typeof import('../src/runner/results-file.js');
const { run } = (await import(`${DIST}runner/run.js`)) as typeof import('../src/runner/run.js');
const { createTarget } = (await import(`${DIST}targets/registry.js`)) as typeof import('../src/targets/registry.js');

const N = Number(process.env.BENCH_N ?? 2000);
const TRIALS = Number(process.env.BENCH_TRIALS ?? 7);
const MODES = (process.env.BENCH_MODES ?? 'plain,stream').split(',') as ('plain' | 'stream')[];
const CONCURRENCIES = (process.env.BENCH_C ?? '1,32').split(',').map(Number);


interface Trial {
  wall_ms: number;
  cpu_us: number;
  server_cpu_us: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'jb-http-bench-'));
  const server = await startMinimalServer();
  const serverCpu = (): Promise<number> => server.cpu_us();
  const base = server.base;
  const prompt = 'Which letter? A. x B. y C. z D. w\nAnswer:';

  // The raw baseline: the body the openai target sends (model, messages, temperature, max_tokens, and for a stream its options).
  const rawAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const rawCall = (stream: boolean) => (): Promise<unknown> =>
    new Promise((ok, fail) => {
      const body: Record<string, unknown> = { model: 'm', messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 4 };
      if (stream) Object.assign(body, { stream: true, stream_options: { include_usage: true } });
      const payload = JSON.stringify(body);
      const req = http.request(`${base}/chat/completions`, { method: 'POST', agent: rawAgent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
        let b = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (b += d));
        res.on('end', () => ok(stream ? b : JSON.parse(b)));
      });
      req.on('error', fail);
      req.end(payload);
    });
  const rawPool = async (call: () => Promise<unknown>, concurrency: number): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < N) await call();
      }),
    );
  };

  const cases: Case[] = Array.from({ length: N }, (_, i) => ({ id: `c${i}`, dataset: 'bench', prompt, expected: 'B', weight: 1, tags: [] }));
  const suite: Suite = { name: 'bench', version: '1', scorer: 'substring', source: 'generated', cases };
  let fileNo = 0;
  /** `joulebench run --target openai --meter model --no-idle --bootstrap 0` in-process: a fresh target and results file a trial. */
  const viaRun = async (stream: boolean, concurrency: number): Promise<void> => {
    const target = await createTarget({ kind: 'openai', endpoint: base, model: 'm', max_tokens: 4, stream });
    const path = join(dir, `results-${fileNo++}.jsonl`);
    const sink = new JsonlResultsFile(path);
    try {
      const out = await run({ suite, target, meter: createModelMeter(), sink, warmup: 0, idle_ms: 0, keepResults: false, bootstrap: 0, concurrency });
      if (out.report.correct_count !== N) throw new Error(`run path: ${out.report.correct_count} of ${N} correct (errors: ${out.report.error_count})`);
    } finally {
      sink.close();
      await target.close?.();
      rmSync(path, { force: true });
    }
  };

  const measure = async (f: () => Promise<void>): Promise<Trial> => {
    const s0 = await serverCpu();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await f();
    const wall_ms = performance.now() - t0;
    const c = process.cpuUsage(c0);
    const s1 = await serverCpu();
    return { wall_ms, cpu_us: c.user + c.system, server_cpu_us: s1 - s0 };
  };

  console.log(`joulebench HTTP run path vs raw http.request: ${N} requests a trial, median of ${TRIALS} alternated pairs, Node ${process.version}, loopback server in a child process`);
  console.log('mode    c   raw req/s   run req/s   run/raw (paired)   harness CPU µs/req: raw  run   server CPU µs/req   harness : server, raw  run');
  for (const mode of MODES) {
    const stream = mode === 'stream';
    for (const c of CONCURRENCIES) {
      // Untimed: sockets opened, JIT warm.
      for (let w = 0; w < 2; w++) {
        await rawPool(rawCall(stream), c);
        await viaRun(stream, c);
      }
      const pairs: { raw: Trial; run: Trial }[] = [];
      for (let t = 0; t < TRIALS; t++) {
        const raw = await measure(() => rawPool(rawCall(stream), c));
        const viaRunT = await measure(() => viaRun(stream, c));
        pairs.push({ raw, run: viaRunT });
      }
      const rps = (t: Trial) => (N * 1000) / t.wall_ms;
      const ratio = median(pairs.map((p) => rps(p.run) / rps(p.raw)))!;
      const rawCpu = median(pairs.map((p) => p.raw.cpu_us / N))!;
      const runCpu = median(pairs.map((p) => p.run.cpu_us / N))!;
      const srvCpu = median(pairs.map((p) => p.run.server_cpu_us / N))!;
      const cpuRatio = median(pairs.map((p) => p.run.cpu_us / p.run.server_cpu_us))!;
      const rawCpuRatio = median(pairs.map((p) => p.raw.cpu_us / p.raw.server_cpu_us))!;
      console.log(
        `${mode.padEnd(6)} ${String(c).padStart(3)} ${median(pairs.map((p) => rps(p.raw)))!.toFixed(0).padStart(10)} ${median(pairs.map((p) => rps(p.run)))!.toFixed(0).padStart(11)}   ${ratio.toFixed(2).padStart(8)}×          ${rawCpu.toFixed(0).padStart(14)} ${runCpu.toFixed(0).padStart(4)}   ${srvCpu.toFixed(0).padStart(17)}   ${rawCpuRatio.toFixed(2).padStart(20)}  ${cpuRatio.toFixed(2)}`,
      );
    }
  }
  server.close();
  rawAgent.destroy();
  rmSync(dir, { recursive: true, force: true });
}

await main();
