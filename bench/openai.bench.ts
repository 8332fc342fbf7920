/**
 * The HTTP client's own cost: against a loopback server (a child process) that answers at once,
 * per-request latency p50 at concurrency 1 and requests/s at concurrency 1 and 32, for
 *   - raw `http.request` (keep-alive agent, body read and JSON-parsed): the baseline,
 *   - joulebench's client (`postChat`, plain and streamed) — what the `openai` target uses,
 *   - the official `openai` SDK (`chat.completions.create`, plain and streamed, maxRetries 0),
 *   - undici's `Pool.request` (the client behind Node's fetch), when it is installed — it is not a
 *     dependency; `npm i --no-save undici@6` adds the arm. It was the candidate library for the
 *     `openai` target's client; docs/benchmarks.md says why it was not chosen.
 * Each figure is printed next to the baseline measured in the same run, as a ratio. Client CPU time
 * per request (user + system of this process; the server is another process) is the figure a busy
 * neighbour on a shared machine disturbs least.
 * Run: npm run bench:openai   (N requests per measurement: BENCH_N, default 2000)
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { median, nearestRank } from '../src/core/stats.js';
import { HttpPool, postChat } from '../src/targets/openai/http.js';
import { startMinimalServer } from './minimal-server.js';

const N = Number(process.env.BENCH_N ?? 1000);
/** Rounds over all clients, interleaved (order alternating) so drift on a shared machine hits every client alike; the median is kept. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);


type Call = () => Promise<unknown>;

async function main(): Promise<void> {
  const server = await startMinimalServer();
  const base = server.base;
  const body = { model: 'm', messages: [{ role: 'user' as const, content: 'Which letter? A. x B. y C. z D. w\nAnswer:' }], temperature: 0, max_tokens: 4 };

  const rawAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const raw = (stream: boolean): Call => () =>
    new Promise((ok, fail) => {
      const payload = JSON.stringify(stream ? { ...body, stream: true } : body);
      const req = http.request(`${base}/chat/completions`, { method: 'POST', agent: rawAgent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
        let b = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (b += d));
        res.on('end', () => ok(stream ? b : JSON.parse(b)));
      });
      req.on('error', fail);
      req.end(payload);
    });
  const url = new URL(`${base}/chat/completions`);
  const pool = new HttpPool();
  const ours = (stream: boolean): Call => () =>
    postChat({ url, body: stream ? { ...body, stream: true, stream_options: { include_usage: true } } : body, stream, timeout_ms: 10_000, pool });
  const sdk = new OpenAI({ baseURL: base, apiKey: 'none', maxRetries: 0 });
  const viaSdk = (stream: boolean): Call =>
    stream
      ? async () => {
          const s = await sdk.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
          let t = '';
          for await (const c of s) t += c.choices[0]?.delta?.content ?? '';
          return t;
        }
      : () => sdk.chat.completions.create(body);

  // undici, only when installed (a variable specifier: no type or install dependency on it).
  const undiciName = 'undici';
  const undici = (await import(undiciName).catch(() => null)) as { Pool: new (origin: string, o: object) => { request(o: object): Promise<{ body: { text(): Promise<string> } }>; close(): Promise<void> } } | null;
  const undiciPool = undici ? new undici.Pool(url.origin, { connections: null, pipelining: 1 }) : null;
  const viaUndici = (stream: boolean): Call => async () => {
    const payload = JSON.stringify(stream ? { ...body, stream: true, stream_options: { include_usage: true } } : body);
    const r = await undiciPool!.request({ path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
    const text = await r.body.text();
    return stream ? text : JSON.parse(text);
  };

  const clients: [string, Call][] = [
    ['raw http.request (plain)', raw(false)],
    ['joulebench postChat (plain)', ours(false)],
    ['openai SDK (plain)', viaSdk(false)],
    ...(undiciPool ? [['undici Pool.request (plain)', viaUndici(false)] as [string, Call]] : []),
    ['raw http.request (stream)', raw(true)],
    ['joulebench postChat (stream)', ours(true)],
    ['openai SDK (stream)', viaSdk(true)],
    ...(undiciPool ? [['undici Pool.request (stream)', viaUndici(true)] as [string, Call]] : []),
  ];
  if (!undiciPool) console.log('(undici is not installed: its arm is skipped; `npm i --no-save undici@6` adds it)');

  for (const [, call] of clients) for (let i = 0; i < 300; i++) await call(); // warm sockets and JIT
  const samples = new Map<string, { p50_ms: number[]; rps1: number[]; rps32: number[]; cpu_us: number[] }>(clients.map(([n]) => [n, { p50_ms: [], rps1: [], rps32: [], cpu_us: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order each round so no client always runs right after the heaviest one.
    for (const [name, call] of round % 2 === 0 ? clients : [...clients].reverse()) {
      const lat: number[] = [];
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < N; i++) {
        const s = performance.now();
        await call();
        lat.push(performance.now() - s);
      }
      const m = samples.get(name)!;
      m.rps1.push(N / ((performance.now() - t0) / 1000));
      const cpu = process.cpuUsage(cpu0);
      m.cpu_us.push((cpu.user + cpu.system) / N);
      m.p50_ms.push(nearestRank(lat, 50)!);
      m.rps32.push(await throughput(call, 32, N));
    }
  }
  const rows = clients.map(([name]) => {
    const m = samples.get(name)!;
    return { name, p50_ms: median(m.p50_ms)!, rps1: median(m.rps1)!, rps32: median(m.rps32)!, cpu_us: median(m.cpu_us)! };
  });
  server.close();
  rawAgent.destroy();
  pool.destroy();
  await undiciPool?.close();

  console.log(`node ${process.version}, ${N} requests per figure, median of ${ROUNDS} interleaved rounds, loopback server in a child process\n`);
  console.log('client                          p50 ms  added µs vs raw   client CPU µs/req (× raw)   req/s c=1 (× raw)    req/s c=32 (× raw)');
  for (const r of rows) {
    const b = rows.find((x) => x.name.startsWith('raw') && x.name.endsWith(r.name.slice(r.name.indexOf('('))))!;
    const added = ((r.p50_ms - b.p50_ms) * 1000).toFixed(0).padStart(6);
    console.log(
      `${r.name.padEnd(30)} ${r.p50_ms.toFixed(3).padStart(7)}  ${added}           ${r.cpu_us.toFixed(0).padStart(6)} (${(r.cpu_us / b.cpu_us).toFixed(2)})            ${r.rps1.toFixed(0).padStart(6)} (${(r.rps1 / b.rps1).toFixed(2)})      ${r.rps32.toFixed(0).padStart(6)} (${(r.rps32 / b.rps32).toFixed(2)})`,
    );
  }
}

async function throughput(call: Call, concurrency: number, total: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await call();
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}

await main();
