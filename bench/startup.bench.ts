/**
 * Start-up cost and memory of the CLI, next to a bare `node -e 0` measured in the same run:
 * `joulebench --version` (loading the CLI), `joulebench --help` (the static command table: no command
 * module loaded; goals: --help ≤ 1.5×, --version ≤ 1.3× the baseline) and `joulebench run --suite all` (the whole embedded
 * default: 100 cases, report, receipt, history off). Alternated, median of N, CPU and wall time.
 *
 *   npm run bench:startup      (or: node --import tsx bench/startup.bench.ts [trials])
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../src/core/stats.js';

const TRIALS = Number(process.argv[2] ?? 9);
const BIN = fileURLToPath(new URL('../bin/joulebench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'jb-startup-'));

interface Sample {
  wall_ms: number;
  cpu_ms: number;
  maxrss_mb: number;
}

/** Runs a command under GNU-time-like accounting: wall from the clock, CPU and peak RSS from /usr/bin/time when present. */
function measure(args: string[]): Sample {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, JOULEBENCH_HOME: dir, NO_COLOR: '1' } });
  const wall_ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const last = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wall_ms, cpu_ms: ((last[0] ?? 0) + (last[1] ?? 0)) * 1000, maxrss_mb: (last[2] ?? 0) / 1024 };
}

const hasTime = spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status === 0;
if (!hasTime) {
  console.log('bench:startup needs /usr/bin/time (Debian package "time")');
  process.exit(0);
}
const cases: Record<string, string[]> = {
  'node -e 0 (baseline)': ['-e', '0'],
  'joulebench --version': [BIN, '--version'],
  'joulebench --help': [BIN, '--help'],
  'joulebench run --suite all': [BIN, 'run', '--suite', 'all', '-q', '--no-history', '--out', join(dir, 'r.json')],
};
const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let t = 0; t < TRIALS; t++) for (const [name, args] of Object.entries(cases)) samples[name]!.push(measure(args));
rmSync(dir, { recursive: true, force: true });

const base = samples['node -e 0 (baseline)']!;
const med = (s: Sample[], k: keyof Sample) => median(s.map((x) => x[k]))!;
console.log(`joulebench start-up, median of ${TRIALS} alternated trials, Node ${process.version}`);
for (const [name, s] of Object.entries(samples)) {
  console.log(
    `  ${name.padEnd(28)} wall ${med(s, 'wall_ms').toFixed(0).padStart(5)} ms (${(med(s, 'wall_ms') / med(base, 'wall_ms')).toFixed(2)}×)` +
      `  CPU ${med(s, 'cpu_ms').toFixed(0).padStart(5)} ms (${(med(s, 'cpu_ms') / Math.max(1, med(base, 'cpu_ms'))).toFixed(2)}×)` +
      `  peak RSS ${med(s, 'maxrss_mb').toFixed(0).padStart(4)} MB`,
  );
}
