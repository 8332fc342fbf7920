/**
 * MMLU data streams: `joulebench run --suite mmlu --data FILE` of generated
 * Hendrycks CSV and cais/mmlu JSONL files at 10k and 200k rows against the echo target, one child
 * each under /usr/bin/time: CPU time and peak RSS, alternating sizes and formats, median of TRIALS
 * (default 3). Next to them, the whole-file loader alone (`loadMmlu`, what `run` did before it
 * streamed): peak RSS of merely holding the 200k rows. Prints the figure the goal names: the run's
 * peak RSS at 200k rows over its peak at 10k.
 *
 *   npm run bench:mmlu             (or: node --import tsx bench/mmlu-stream.bench.ts [10000,200000])
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { csvLine, generatedRows, writeLines } from '../test/helpers/mmlu-fixtures.js';

const SIZES = (process.argv[2] ?? '10000,200000').split(',').map(Number);
const TRIALS = Number(process.env.TRIALS ?? 3);
const BIN = fileURLToPath(new URL('../bin/joulebench.js', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'jb-mmlu-bench-'));
const env = { ...process.env, JOULEBENCH_HOME: dir, NO_COLOR: '1' };

function timed(args: string[]): { cpu_s: number; rss_mb: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr.slice(-500)}`);
  const [u, s, rss] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { cpu_s: (u ?? 0) + (s ?? 0), rss_mb: (rss ?? 0) / 1024 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

try {
  // One pool of questions, written as both formats (a CSV file's subject is its name).
  const files: { fmt: string; n: number; path: string }[] = [];
  for (const n of SIZES) {
    const rows = generatedRows(Math.min(n, 20_000), 57);
    const row = (i: number) => rows[i % rows.length]!;
    // ~450 bytes a row, about what the real test split averages.
    const pad = 'Consider the following situation carefully before answering. '.repeat(6);
    const csv = join(dir, `gen${n}_test.csv`);
    writeLines(csv, n, (i) => csvLine({ ...row(i), question: `${i}. ${pad}${row(i).question}` }));
    const jsonl = join(dir, `gen${n}.jsonl`);
    writeLines(jsonl, n, (i) => JSON.stringify({ ...row(i), question: `${i}. ${pad}${row(i).question}` }) + '\n');
    files.push({ fmt: 'csv', n, path: csv }, { fmt: 'jsonl', n, path: jsonl });
  }
  const runs = new Map<string, { cpu_s: number[]; rss_mb: number[] }>();
  const held = new Map<string, number[]>();
  const add = <T>(m: Map<string, T>, k: string, v: () => T): T => m.get(k) ?? (m.set(k, v()), m.get(k)!);
  const load0 = loadavg()[0]!;
  for (let t = 0; t < TRIALS; t++) {
    for (const f of t % 2 === 0 ? files : [...files].reverse()) {
      const key = `${f.fmt} ${f.n}`;
      const r = timed([BIN, 'run', '-q', '--no-history', '--suite', 'mmlu', '--data', f.path, '--target', 'echo', '--warmup', '0', '--bootstrap', '0', '--no-idle', '-o', join(dir, 'r.json')]);
      const m = add(runs, key, () => ({ cpu_s: [] as number[], rss_mb: [] as number[] }));
      m.cpu_s.push(r.cpu_s);
      m.rss_mb.push(r.rss_mb);
      const h = timed(['--input-type=module', '-e', `const { loadMmlu } = await import(${JSON.stringify(DIST + 'suites/mmlu.js')}); loadMmlu(${JSON.stringify(f.path)});`]);
      add(held, key, () => [] as number[]).push(h.rss_mb);
    }
  }
  const load1 = loadavg()[0]!;
  console.log(`joulebench run --suite mmlu (streamed), echo target, --bootstrap 0, median of ${TRIALS}, Node ${process.version}, load average ${load0.toFixed(1)}–${load1.toFixed(1)}`);
  console.log('| data | rows | file MB | run CPU s | run peak RSS MB | whole-file loader alone, peak RSS MB |');
  console.log('|---|---|---|---|---|---|');
  for (const f of files) {
    const key = `${f.fmt} ${f.n}`;
    const m = runs.get(key)!;
    console.log(`| ${f.fmt} | ${f.n} | ${(statSync(f.path).size / 1e6).toFixed(1)} | ${median(m.cpu_s).toFixed(2)} | ${median(m.rss_mb).toFixed(0)} | ${median(held.get(key)!).toFixed(0)} |`);
  }
  const [lo, hi] = [SIZES[0]!, SIZES.at(-1)!];
  for (const fmt of ['csv', 'jsonl']) {
    const a = median(runs.get(`${fmt} ${lo}`)!.rss_mb);
    const b = median(runs.get(`${fmt} ${hi}`)!.rss_mb);
    console.log(`${fmt}: run peak RSS at ${hi} rows / at ${lo} rows = ${(b / a).toFixed(2)}× (${b.toFixed(0)} / ${a.toFixed(0)} MB)`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
