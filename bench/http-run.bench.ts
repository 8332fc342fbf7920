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
 *   npm run bench:http   (BENCH_N requests a trial, default 2000; BENCH_TRIALS pairs, default 7)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Case, Suite } from '../src/core/types.js';
import { median } from '../src/core/stats.js';
import { createModelMeter } from '../src/meters/model.js';
import { JsonlResultsFile } from '../src/runner/results-file.js';
import { run } from '../src/runner/run.js';
import { createTarget } from '../src/targets/registry.js';

const N = Number(process.env.BENCH_N ?? 2000);
const TRIALS = Number(process.env.BENCH_TRIALS ?? 7);
const MODES = (process.env.BENCH_MODES ?? 'plain,stream').split(',') as ('plain' | 'stream')[];
const CONCURRENCIES = (process.env.BENCH_C ?? '1,32').split(',').map(Number);

/** The server: answers every chat request at once, and reports its own CPU time when asked over IPC. */
const SERVER = `
const http = require('node:http');
const plain = JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'B' }, finish_reason: 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 } });
const chunk = (o) => 'data: ' + JSON.stringify(o) + '\\n\\n';
const stream = chunk({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'B' } }] })
  + chunk({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })
  + chunk({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [], usage: { prompt_tokens: 50, completion_tokens: 1, total_tokens: 51 } }) + 'data: [DONE]\\n\\n';
const s = http.createServer((req, res) => {
  let b = ''; req.on('data', (d) => (b += d)); req.on('end', () => {
    if (b.includes('"stream":true')) { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(stream); }
    else { res.writeHead(200, { 'content-type': 'application/json' }); res.end(plain); }
  });
});
s.keepAliveTimeout = 60000;
process.on('message', (m) => { if (m === 'cpu') { const c = process.cpuUsage(); process.send({ cpu_us: c.user + c.system }); } });
s.listen(0, '127.0.0.1', () => process.send({ port: s.address().port }));
`;

interface Trial {
  wall_ms: number;
  cpu_us: number;
  server_cpu_us: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'jb-http-bench-'));
  const serverFile = join(dir, 'server.cjs');
  writeFileSync(serverFile, SERVER);
  const child = fork(serverFile, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  let onMessage: ((m: { port?: number; cpu_us?: number }) => void) | null = null;
  child.on('message', (m) => onMessage?.(m as { port?: number; cpu_us?: number }));
  const ask = (): Promise<{ port?: number; cpu_us?: number }> => new Promise((ok) => (onMessage = ok));
  const port = (await ask()).port!;
  const serverCpu = async (): Promise<number> => {
    const p = ask();
    child.send('cpu');
    return (await p).cpu_us!;
  };
  const base = `http://127.0.0.1:${port}/v1`;
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
  console.log('mode    c   raw req/s   run req/s   run/raw (paired)   harness CPU µs/req: raw  run   server CPU µs/req   run harness : server');
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
      console.log(
        `${mode.padEnd(6)} ${String(c).padStart(3)} ${median(pairs.map((p) => rps(p.raw)))!.toFixed(0).padStart(10)} ${median(pairs.map((p) => rps(p.run)))!.toFixed(0).padStart(11)}   ${ratio.toFixed(2).padStart(8)}×          ${rawCpu.toFixed(0).padStart(14)} ${runCpu.toFixed(0).padStart(4)}   ${srvCpu.toFixed(0).padStart(17)}   ${cpuRatio.toFixed(2).padStart(14)} : 1`,
      );
    }
  }
  child.kill();
  rawAgent.destroy();
  rmSync(dir, { recursive: true, force: true });
}

await main();
