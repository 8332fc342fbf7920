/**
 * Rebuilding a report from a results file (`joulebench report --json FILE`, what the CLI does), on
 * the same N-case file, alternated, in one run: lines in case order (a sequential run), the same lines
 * in a concurrent run's order (each written up to 32 places late), and the all-in-memory path (read
 * every line into an object with readResultsFile, sort, aggregate). Beside them, the floor any JSON-lines reader
 * pays: a bare loop that reads the file in 64 KiB chunks, splits it into lines and JSON.parses each,
 * nothing more. The N-case files' headers say `bootstrap: 0` (as `run --bootstrap 0` writes it): the
 * 2000-resample bootstrap's cost grows with cases × resamples and is measured apart, on N/10 cases with
 * the default. Wall time, CPU and peak RSS per child (/usr/bin/time). Budget at 1M cases: ≤ 150 MB peak
 * RSS and ≤ 4× the bare loop's wall time on the same file. The concurrent-order file's header says
 * `concurrency: 32`, as a concurrent run's does; its report differs from the sequential file's only in
 * `concurrency`, `energy_attribution` and `throughput`. A third file holds an HTTP target's lines (no
 * trace; `meta` on every line). Start-up: `report --json` of a 60-case file, beside `node -e 0`. Also
 * timed on the same files: `compare` of the two (paired statistics over columns) and `report -o page.html`.
 *
 *   npm run bench:report            (or: node --import tsx bench/report.bench.ts [cases] [trials])
 *   JB_BASELINE_BIN=/path/to/other/bin/joulebench.js …   adds the same report runs of another build (before/after, same load)
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../src/core/stats.js';

const N = Number(process.argv[2] ?? 1_000_000);
const TRIALS = Number(process.argv[3] ?? 3);
const BIN = fileURLToPath(new URL('../bin/joulebench.js', import.meta.url));
const DIST = new URL('../dist/', import.meta.url).href;
const dir = mkdtempSync(join(tmpdir(), 'jb-report-bench-'));
const env = { ...process.env, JOULEBENCH_HOME: dir, NO_COLOR: '1' };

try {
  // A real run's results lines (header, warmup, scored cases), its scored lines repeated to N cases.
  const seed = spawnSync(process.execPath, [BIN, 'run', '-q', '--no-history', '--suite', 'router', '-o', join(dir, 'seed.json')], { env, encoding: 'utf8' });
  if (seed.status !== 0) throw new Error(seed.stderr);
  const lines = readFileSync(join(dir, 'seed.results.jsonl'), 'utf8').trim().split('\n');
  const head = lines.filter((l) => !l.includes('"phase":"scored"') && !l.startsWith('{"record":"end"'));
  const scored = lines.filter((l) => l.includes('"phase":"scored"'));
  /** N scored cases; `late`: how many places a line may be written after its case's place (0: in order). */
  const write = (name: string, n: number, late: number, bootstrap: number | null, concurrency = 1, shape: (line: string, i: number) => string = (l) => l): string => {
    const file = join(dir, name);
    const fd = openSync(file, 'w');
    const h = JSON.parse(head[0]!) as Record<string, unknown>;
    if (bootstrap !== null) h.bootstrap = bootstrap;
    h.concurrency = concurrency;
    h.cases = n; // the seed's scored lines, re-indexed to n cases
    writeSync(fd, [JSON.stringify(h), ...head.slice(1)].join('\n') + '\n');
    const line = (i: number) => shape(scored[i % scored.length]!.replace(/"index":\d+/, `"index":${i}`).replace(/"latency_ms":[\d.]+/, `"latency_ms":${(i * 7919) % 1000}.25`), i) + '\n';
    // A concurrent run's order: case i finishes at i + (a pseudo-random 0..late), lines written as cases finish.
    const order = Array.from({ length: n }, (_, i) => i);
    if (late > 0) {
      const at = order.map((i) => i + ((i * 2654435761) % 4294967296) / 4294967296 * late);
      order.sort((a, b) => at[a]! - at[b]!);
    }
    let batch = '';
    for (const i of order) {
      batch += line(i);
      if (batch.length > 1 << 20) {
        writeSync(fd, batch);
        batch = '';
      }
    }
    writeSync(fd, batch);
    closeSync(fd);
    return file;
  };
  const file = write('big.results.jsonl', N, 0, 0);
  const concurrent = write('concurrent.results.jsonl', N, 32, 0, 32);
  // An HTTP target's lines: no trace, its facts in `meta` on every line (as the openai target writes them).
  const httpShaped = write('http.results.jsonl', N, 0, 0, 1, (l, i) => l.replace(/,"trace":\[.*\]\}$/, `,"meta":{"e2e_ms":${((i * 7919) % 1000) + 0.194},"streamed":false,"j_per_output_token":null,"output_tokens_per_j":null}}`));
  const small = write('small.results.jsonl', 60, 0, null);
  const withBootstrap = write('bootstrap.results.jsonl', Math.round(N / 10), 0, null);

  const inMemory = `const { readResultsFile } = await import('${DIST}runner/results-stream.js'); const { aggregate, reportContextOf } = await import('${DIST}core/aggregate.js');
const f = readResultsFile(process.argv[1]); const rank = { warmup: 0, scored: 1 };
const sorted = f.results.sort((a, b) => rank[a.phase] - rank[b.phase] || a.pass - b.pass || a.index - b.index);
process.stdout.write(JSON.stringify(aggregate(sorted, reportContextOf(f.header))).slice(0, 40));`;
  const bareLoop = `const { openSync, readSync } = await import('node:fs'); const { StringDecoder } = await import('node:string_decoder');
const fd = openSync(process.argv[1], 'r'); const buf = Buffer.allocUnsafe(1 << 16); const dec = new StringDecoder('utf8'); let rest = ''; let n = 0;
for (let got; (got = readSync(fd, buf, 0, buf.length, null)) > 0; ) { const lines = (rest + dec.write(buf.subarray(0, got))).split('\\n'); rest = lines.pop(); for (const l of lines) if (l !== '' && JSON.parse(l) !== null) n++; }
process.stdout.write(String(n));`;
  const variants: Record<string, string[]> = {
    'streamed, in case order': [BIN, 'report', '--json', file],
    'streamed, concurrent order': [BIN, 'report', '--json', concurrent],
    'streamed, meta on every line (HTTP)': [BIN, 'report', '--json', httpShaped],
    'bare JSON.parse loop, in case order': ['--input-type=module', '-e', bareLoop, file],
    'bare JSON.parse loop, concurrent order': ['--input-type=module', '-e', bareLoop, concurrent],
    'all in memory (readResultsFile)': ['--input-type=module', '-e', inMemory, file],
    [`streamed, N/10 cases, bootstrap 2000`]: [BIN, 'report', '--json', withBootstrap],
    // The other commands that read every line: a paired comparison of the two N-case files, and the HTML page (its first 20,000 cases kept).
    'compare, in order vs concurrent': [BIN, 'compare', '-q', file, concurrent],
    'report -o page.html, in case order': [BIN, 'report', file, '-o', join(dir, 'page.html')],
    'report --json, 60 cases (start-up)': [BIN, 'report', '--json', small],
    'node -e 0 (start-up)': ['-e', '0'],
  };
  const baseline = process.env.JB_BASELINE_BIN;
  if (baseline) {
    variants['baseline: in case order'] = [baseline, 'report', '--json', file];
    variants['baseline: concurrent order'] = [baseline, 'report', '--json', concurrent];
    variants['baseline: meta on every line'] = [baseline, 'report', '--json', httpShaped];
    variants['baseline: 60 cases (start-up)'] = [baseline, 'report', '--json', small];
    variants['baseline: compare'] = [baseline, 'compare', '-q', file, concurrent];
    variants['baseline: page.html'] = [baseline, 'report', file, '-o', join(dir, 'page-baseline.html')];
  }
  const samples: Record<string, { wall_s: number; cpu_s: number; rss_mb: number }[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  const failed: Record<string, string> = {};
  const outputs: Record<string, string> = {};
  for (let t = 0; t < TRIALS; t++) {
    const order = t % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
    for (const name of order) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, '--max-old-space-size=8192', ...variants[name]!], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
      const wall_s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (r.status !== 0) {
        if (!name.startsWith('all in memory')) throw new Error(`${name}: ${r.stderr.slice(0, 500)}`);
        failed[name] = r.stderr.split('\n').find((l) => /^\S*Error|^joulebench:/.test(l)) ?? `exit ${r.status}`;
        continue;
      }
      outputs[name] = r.stdout;
      const [u, sy, rss] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
      samples[name]!.push({ wall_s, cpu_s: (u ?? 0) + (sy ?? 0), rss_mb: (rss ?? 0) / 1024 });
    }
  }
  // The same cases in another line order: the same report, byte for byte (but for what the header's concurrency
  // changes: a concurrent run's report has a throughput object, over several lines, where a sequential one's is null).
  const sequentialOnly = (s: string | undefined): string => {
    const report = JSON.parse(s ?? 'null') as Record<string, unknown> | null;
    if (report === null) return '';
    for (const key of ['concurrency', 'energy_attribution', 'throughput', 'suite_window_ms']) delete report[key];
    return JSON.stringify(report);
  };
  if (sequentialOnly(outputs['streamed, in case order']) !== sequentialOnly(outputs['streamed, concurrent order'])) throw new Error('the concurrent-order file gave a different report');
  for (const [a, b] of [['streamed, in case order', 'baseline: in case order'], ['streamed, concurrent order', 'baseline: concurrent order'], ['streamed, meta on every line (HTTP)', 'baseline: meta on every line']] as const) {
    if (outputs[b] !== undefined && outputs[a] !== outputs[b]) throw new Error(`${a}: a different report from the baseline build`);
  }
  const mb = statSync(file).size / 1e6;
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} (at the end)`);
  console.log(`report rebuild from ${N.toLocaleString('en')} cases (${mb.toFixed(0)} MB; bootstrap variant ${Math.round(N / 10).toLocaleString('en')} cases), median of ${TRIALS} alternated trials, Node ${process.version}`);
  for (const [name, why] of Object.entries(failed)) console.log(`  ${name.padEnd(38)} failed: ${why.slice(0, 160)}`);
  const base = samples['all in memory (readResultsFile)']!.length > 0 ? samples['all in memory (readResultsFile)']! : samples['streamed, in case order']!;
  for (const [name, s] of Object.entries(samples)) {
    if (s.length === 0) continue;
    const w = median(s.map((x) => x.wall_s))!;
    const m = median(s.map((x) => x.rss_mb))!;
    const c = median(s.map((x) => x.cpu_s))!;
    console.log(
      `  ${name.padEnd(38)} wall ${w.toFixed(2).padStart(6)} s (${(w / median(base.map((x) => x.wall_s))!).toFixed(2)}×)  CPU ${c.toFixed(2).padStart(6)} s  peak RSS ${m.toFixed(0).padStart(5)} MB (${(m / median(base.map((x) => x.rss_mb))!).toFixed(2)}×)`,
    );
  }
  // The budget at 1M cases: peak RSS, and wall time against the bare JSON.parse loop over the same file.
  const med = (name: string, k: 'wall_s' | 'cpu_s' | 'rss_mb') => median(samples[name]!.map((x) => x[k]))!;
  for (const order of ['in case order', 'concurrent order']) {
    const w = med(`streamed, ${order}`, 'wall_s');
    const bare = med(`bare JSON.parse loop, ${order}`, 'wall_s');
    const rss = med(`streamed, ${order}`, 'rss_mb');
    const ratio = w / bare;
    // CPU too: on a shared machine wall time is mostly the neighbours' (both arms see them, not equally).
    const cpuRatio = med(`streamed, ${order}`, 'cpu_s') / med(`bare JSON.parse loop, ${order}`, 'cpu_s');
    const met = N >= 1_000_000 ? (ratio <= 4 && rss <= 150 ? 'met' : 'not met') : 'n/a below 1M cases';
    console.log(
      `budget (≤ 4× the bare loop, ≤ 150 MB peak RSS), ${order}: report ${w.toFixed(2)} s, bare JSON.parse loop ${bare.toFixed(2)} s, ratio ${ratio.toFixed(2)}× (CPU ${cpuRatio.toFixed(2)}×), peak RSS ${rss.toFixed(0)} MB (${met})`,
    );
  }
} finally {
  if (!process.env.JB_KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(dir);
}
