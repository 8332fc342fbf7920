/**
 * A load run's memory at scale (memory must not grow by an object a request). N requests
 * (default 100,000) at `--request-rate inf`, 64 in flight, through `joulebench run --target openai`
 * against the minimal streaming server (bench/minimal-server.ts: one token a reply, so what a request
 * costs the harness is its records, not its answer), then `joulebench report --json` of the results
 * file that run wrote. Each as a user runs it (a child process under /usr/bin/time): wall, CPU, peak RSS.
 *
 *   npm run bench:load-memory       (or: node --import tsx bench/load-memory.bench.ts [requests] [trials])
 *   JB_BASELINE_BIN=/path/to/other/bin/joulebench.js …   runs another build the same way, alternated in
 *   the same rounds, and prints each figure over the baseline's; both builds' reports of the same
 *   results file must give the same `load` block.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../src/core/stats.js';
import { startMinimalServer } from './minimal-server.js';

const N = Number(process.argv[2] ?? 100_000);
const TRIALS = Number(process.argv[3] ?? 3);
const BIN = fileURLToPath(new URL('../bin/joulebench.js', import.meta.url));
const BASELINE = process.env.JB_BASELINE_BIN ?? null;
const dir = mkdtempSync(join(tmpdir(), 'jb-load-memory-'));
const env = { ...process.env, JOULEBENCH_HOME: dir, NO_COLOR: '1' };
const server = await startMinimalServer();

interface Sample {
  wall_s: number;
  cpu_s: number;
  rss_mb: number;
}

/** One child under /usr/bin/time: its wall time, CPU and peak RSS, and what it printed. */
function timed(args: string[]): Sample & { stdout: string } {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall_s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${args.slice(0, 3).join(' ')}: ${r.stderr.slice(-800)}`);
  const [u, s, rss] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wall_s, cpu_s: (u ?? 0) + (s ?? 0), rss_mb: (rss ?? 0) / 1024, stdout: r.stdout };
}

try {
  const suite = join(dir, 'suite.jsonl');
  writeFileSync(suite, Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `q${i}`, prompt: `Question ${i}? A, B, C or D.`, expected: 'B' })).join('\n') + '\n');
  const builds: [string, string][] = [['this build', BIN], ...(BASELINE ? ([['baseline', BASELINE]] as [string, string][]) : [])];
  const samples = new Map<string, Sample[]>();
  const push = (k: string, s: Sample) => samples.set(k, [...(samples.get(k) ?? []), s]);
  for (let t = 0; t < TRIALS; t++) {
    const order = t % 2 === 0 ? builds : [...builds].reverse();
    const files: string[] = [];
    for (const [name, bin] of order) {
      const out = join(dir, `${name.replace(' ', '-')}-${t}.json`);
      const run = timed([bin, 'run', '-q', '--no-history', '--suite', suite, '--target', 'openai', '--endpoint', server.base, '--model', 'm', '--idle-ms', '1', '--request-rate', 'inf', '--max-concurrency', '64', '--num-requests', String(N), '-o', out]);
      push(`${name}: run`, run);
      files.push(out.replace(/\.json$/, '.results.jsonl'));
    }
    // Each build rebuilds the report of every file written this round: the same file, the same load block.
    const blocks = new Map<string, string>();
    for (const [name, bin] of order) {
      for (const file of files) {
        const r = timed([bin, 'report', '--json', file]);
        push(`${name}: report`, r);
        const block = JSON.stringify((JSON.parse(r.stdout) as { load?: unknown }).load);
        if (block === undefined) throw new Error(`${name}: report of ${file} has no load block`);
        if (blocks.has(file) && blocks.get(file) !== block) throw new Error(`${file}: the builds rebuilt different load blocks`);
        blocks.set(file, block);
      }
    }
    rmSync(join(dir, 'history'), { recursive: true, force: true });
    for (const f of files) rmSync(f, { force: true });
  }
  console.log(`load run of ${N.toLocaleString('en')} requests (rate inf, 64 in flight, one-token streamed replies) and its report rebuilt, median of ${TRIALS} alternated trials, Node ${process.version}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at the end`);
  const med = (k: string, f: keyof Sample) => median(samples.get(k)!.map((s) => s[f]))!;
  for (const step of ['run', 'report'] as const) {
    for (const [name] of builds) {
      const k = `${name}: ${step}`;
      const vs = BASELINE && name !== 'baseline' ? (f: keyof Sample) => ` (${(med(k, f) / med(`baseline: ${step}`, f)).toFixed(2)}×)` : () => '';
      console.log(`  ${k.padEnd(20)} wall ${med(k, 'wall_s').toFixed(2).padStart(6)} s${vs('wall_s')}  CPU ${med(k, 'cpu_s').toFixed(2).padStart(6)} s${vs('cpu_s')}  peak RSS ${med(k, 'rss_mb').toFixed(0).padStart(5)} MB${vs('rss_mb')}`);
    }
  }
} finally {
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
