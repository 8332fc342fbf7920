/**
 * The whole run path against HTTP next to a bare client, in one process and one run, at concurrency
 * 1 and 32 against a minimal loopback server in a child process (bench/minimal-server.ts), plain and
 * streamed. Three arms, alternated within each round (raw, client, run, raw, …):
 *   - raw: a bare `http.request` loop (keep-alive agent, the same request body, the reply read and
 *     JSON-parsed) — the baseline of goal 5;
 *   - client: joulebench's HTTP client alone (`postChat` on one `HttpPool`, undici underneath), as the target calls it;
 *   - run: the `openai` target as `joulebench run --target openai` drives it (the runner, the target
 *     with its retry loop, the client, scoring, the results JSONL written to disk, aggregation, and
 *     the run's abort signal on every request, as the CLI passes one).
 * Requests/s ratios are the median over rounds of an arm's trial against the raw trial of the same
 * round. CPU per request is this process's user + system time over the trial; the server's is the
 * child's own `process.cpuUsage()` over the same trial, so "harness : server" says whether the
 * harness is small next to what it measures (goal: ≤ 1 for the run path).
 *
 * With BENCH_BEFORE_DIST=/path/to/other/dist (another checkout's build, e.g. main's), a fourth arm
 * runs that build's run path in the same rounds, for before/after figures at the same load.
 *
 *   npm run bench:http   (builds first; BENCH_N requests a trial, default 2000; BENCH_TRIALS rounds,
 *   default 7; BENCH_MODES=plain,stream; BENCH_C=1,32)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
const { HttpPool, postChat } = (await import(`${DIST}targets/openai/http.js`)) as typeof import('../src/targets/openai/http.js');

/** Another build's run path (its runner, target and client), measured in the same rounds when given. */
const BEFORE = process.env.BENCH_BEFORE_DIST ? new URL(`${process.env.BENCH_BEFORE_DIST.replace(/\/?$/, '/')}`, 'file:///').href : null;
const before = BEFORE
  ? {
      createModelMeter: ((await import(`${BEFORE}meters/model.js`)) as typeof import('../src/meters/model.js')).createModelMeter,
      JsonlResultsFile: ((await import(`${BEFORE}runner/results-file.js`)) as typeof import('../src/runner/results-file.js')).JsonlResultsFile,
      run: ((await import(`${BEFORE}runner/run.js`)) as typeof import('../src/runner/run.js')).run,
      createTarget: ((await import(`${BEFORE}targets/registry.js`)) as typeof import('../src/targets/registry.js')).createTarget,
    }
  : null;

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

  // joulebench's client alone: the request the target builds for a case (the prompt spliced into a body
  // serialized once, as target.ts does), one pool.
  const clientUrl = new URL(`${base}/chat/completions`);
  const clientPool = new HttpPool();
  const clientCall = (stream: boolean) => (): Promise<unknown> => {
    const end = stream ? ',"temperature":0,"max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}' : ',"temperature":0,"max_tokens":4}';
    const payload = `{"model":"m","messages":[{"role":"user","content":${JSON.stringify(prompt)}}]${end}`;
    return postChat({ url: clientUrl, payload, stream, timeout_ms: 120_000, pool: clientPool });
  };

  const cases: Case[] = Array.from({ length: N }, (_, i) => ({ id: `c${i}`, dataset: 'bench', prompt, expected: 'B', weight: 1, tags: [] }));
  const suite: Suite = { name: 'bench', version: '1', scorer: 'substring', source: 'generated', cases };
  let fileNo = 0;
  /** `joulebench run --target openai --meter model --no-idle --bootstrap 0` in-process: a fresh target and results file a trial. */
  const viaRun = async (stream: boolean, concurrency: number, build = { createModelMeter, JsonlResultsFile, run, createTarget }): Promise<void> => {
    const target = await build.createTarget({ kind: 'openai', endpoint: base, model: 'm', max_tokens: 4, stream });
    const path = join(dir, `results-${fileNo++}.jsonl`);
    const sink = new build.JsonlResultsFile(path);
    try {
      // The CLI gives the run an abort signal (Ctrl-C), and every request carries it: so does this arm.
      const out = await build.run({ suite, target, meter: build.createModelMeter(), sink, warmup: 0, idle_ms: 0, keepResults: false, bootstrap: 0, concurrency, signal: new AbortController().signal });
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

  const load = (): string => {
    try {
      return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    } catch {
      return 'n/a';
    }
  };
  console.log(`joulebench HTTP run path vs raw http.request: ${N} requests a trial, median of ${TRIALS} rounds (raw, client, run${before ? `, before = ${process.env.BENCH_BEFORE_DIST}` : ''} alternated), Node ${process.version}, loopback server in a child process; load average before: ${load()}`);
  console.log('CPU is µs a request (this process, user + system); "× srv" is that over the server\'s own CPU in the same trial (goal for the run path: ≤ 1), the median of the rounds, then the run path\'s lowest and highest round.');
  console.log('mode    c │ req/s: raw  client     run │ × raw: client   run │ CPU: raw  client  run │ server │ × srv: raw  client   run');
  const results: { mode: string; c: number; rawRps: number; clientRps: number; runRps: number; clientX: number; runX: number; cpu: [number, number, number]; srv: number; srvX: [number, number, number]; runSrvRange: [number, number] }[] = [];
  for (const mode of MODES) {
    const stream = mode === 'stream';
    for (const c of CONCURRENCIES) {
      const arms: [string, () => Promise<void>][] = [
        ['raw', () => rawPool(rawCall(stream), c)],
        ['client', () => rawPool(clientCall(stream), c)],
        ['run', () => viaRun(stream, c)],
      ];
      if (before) arms.push(['before', () => viaRun(stream, c, before)]);
      // Untimed: sockets opened, JIT warm.
      for (let w = 0; w < 2; w++) for (const [, f] of arms) await f();
      const rounds: Trial[][] = [];
      for (let t = 0; t < TRIALS; t++) {
        const round: Trial[] = [];
        for (const [, f] of arms) round.push(await measure(f));
        rounds.push(round);
      }
      const rps = (t: Trial) => (N * 1000) / t.wall_ms;
      const med = (f: (r: Trial[]) => number) => median(rounds.map(f))!;
      const row = {
        mode,
        c,
        rawRps: med((r) => rps(r[0]!)),
        clientRps: med((r) => rps(r[1]!)),
        runRps: med((r) => rps(r[2]!)),
        clientX: med((r) => rps(r[1]!) / rps(r[0]!)),
        runX: med((r) => rps(r[2]!) / rps(r[0]!)),
        cpu: [0, 1, 2].map((i) => med((r) => r[i]!.cpu_us / N)) as [number, number, number],
        srv: med((r) => r[2]!.server_cpu_us / N),
        srvX: [0, 1, 2].map((i) => med((r) => r[i]!.cpu_us / r[i]!.server_cpu_us)) as [number, number, number],
        // The run path's CPU over the server's in each round: on a shared machine its spread is the noise the median hides.
        runSrvRange: [Math.min(...rounds.map((r) => r[2]!.cpu_us / r[2]!.server_cpu_us)), Math.max(...rounds.map((r) => r[2]!.cpu_us / r[2]!.server_cpu_us))] as [number, number],
      };
      results.push(row);
      const beforeNote = before
        ? `   before: ${med((r) => rps(r[3]!)).toFixed(0)} req/s (${med((r) => rps(r[3]!) / rps(r[0]!)).toFixed(2)}× raw), CPU ${med((r) => r[3]!.cpu_us / N).toFixed(0)} µs (${med((r) => r[3]!.cpu_us / r[3]!.server_cpu_us).toFixed(2)} × srv); run/before CPU ${med((r) => r[2]!.cpu_us / r[3]!.cpu_us).toFixed(2)}`
        : '';
      const f0 = (v: number, w: number) => v.toFixed(0).padStart(w);
      const f2 = (v: number, w: number) => v.toFixed(2).padStart(w);
      console.log(
        `${mode.padEnd(6)} ${String(c).padStart(3)} │ ${f0(row.rawRps, 9)} ${f0(row.clientRps, 7)} ${f0(row.runRps, 7)} │ ${f2(row.clientX, 12)} ${f2(row.runX, 5)} │ ${f0(row.cpu[0], 8)} ${f0(row.cpu[1], 7)} ${f0(row.cpu[2], 4)} │ ${f0(row.srv, 6)} │ ${f2(row.srvX[0], 10)} ${f2(row.srvX[1], 7)} ${f2(row.srvX[2], 5)} (rounds ${row.runSrvRange[0].toFixed(2)}–${row.runSrvRange[1].toFixed(2)})${beforeNote}`,
      );
    }
  }
  const worst = (f: (r: (typeof results)[number]) => number, pick: (a: number, b: number) => number) => results.map(f).reduce((a, b) => pick(a, b));
  console.log(
    `goal 5: run path ≥ 0.85× raw req/s — worst ${worst((r) => r.runX, Math.min).toFixed(2)}× (${worst((r) => r.runX, Math.min) >= 0.85 ? 'met' : 'NOT met'}); ` +
      `run-path CPU ≤ server's — worst ${worst((r) => r.srvX[2], Math.max).toFixed(2)} : 1 (${worst((r) => r.srvX[2], Math.max) <= 1 ? 'met' : 'NOT met'}); load average after: ${load()}`,
  );
  clientPool.destroy();
  server.close();
  rawAgent.destroy();
  rmSync(dir, { recursive: true, force: true });
}

await main();
