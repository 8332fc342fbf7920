/**
 * joulebench beside promptfoo, in one run, on the same generated echo cases: the same prompts, each
 * answered by an echo (promptfoo's built-in `echo` provider; joulebench's `echo` target) and scored by a
 * case-insensitive substring check against the same expected text (promptfoo's `icontains` assertion;
 * a JSONL suite's default `substring` scorer). Each tool is a child under /usr/bin/time, arms
 * alternating in order round by round: wall time, CPU time and the peak RSS of the whole process tree
 * (the tree's RSS summed every 100 ms from /proc, or GNU time's largest single process if higher), then
 * the medians and the ratios. Goal: joulebench ≥ 10× promptfoo's speed at ≤ 0.25× its peak RSS.
 *
 * promptfoo is installed once into a cache folder outside the project (PEER_CACHE, default
 * ~/.cache/joulebench-peer/promptfoo-VERSION), with install scripts off: they fetch browsers and ONNX
 * runtimes for optional providers the echo provider never loads. Its one native binding, better-sqlite3,
 * is pinned to the project's own version and that build's binary copied in (or rebuilt when it differs).
 * Both run as a user would, minus side work: promptfoo with telemetry, update check, cache, sharing,
 * result writes, table and progress bar off and its config dir in a temporary folder; joulebench with
 * `-q --no-history` (its results JSONL, report and receipt are still written).
 *
 *   npm run bench:peer        (or: node --import tsx bench/peer.bench.ts [cases]; BENCH_ROUNDS=3, PROMPTFOO_VERSION)
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../src/core/stats.js';

const CASES = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// The last promptfoo release whose `engines` admits Node 20 (0.120.20 and later ask for ≥ 22.22).
const VERSION = process.env.PROMPTFOO_VERSION ?? '0.120.19';
const CACHE = process.env.PEER_CACHE ?? join(homedir(), '.cache', 'joulebench-peer', `promptfoo-${VERSION}`);
const BIN = fileURLToPath(new URL('../bin/joulebench.js', import.meta.url));
const PAGE = 4096;

if (spawnSync('/usr/bin/time', ['-f', '%U', 'true']).status !== 0) {
  console.log('bench:peer needs /usr/bin/time (Debian package "time")');
  process.exit(0);
}

/** Installs promptfoo into CACHE unless a finished install is there; returns its CLI entry point. */
function installPromptfoo(): string {
  const entry = join(CACHE, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
  const ready = join(CACHE, '.joulebench-ready');
  if (existsSync(ready) && existsSync(entry)) return entry;
  const req = createRequire(import.meta.url);
  const ownSqlite = dirname(req.resolve('better-sqlite3/package.json'));
  const sqliteVersion = (JSON.parse(readFileSync(join(ownSqlite, 'package.json'), 'utf8')) as { version: string }).version;
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(
    join(CACHE, 'package.json'),
    JSON.stringify({ name: 'joulebench-peer-promptfoo', private: true, dependencies: { promptfoo: VERSION }, overrides: { 'better-sqlite3': sqliteVersion } }),
  );
  console.log(`installing promptfoo@${VERSION} into ${CACHE} (once; about 2 GB with its optional providers, minutes)`);
  const npm = (args: string[]) => {
    const r = spawnSync('npm', args, { cwd: CACHE, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed (exit ${r.status})`);
  };
  npm(['install', '--prefix', CACHE, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error']);
  const theirSqlite = join(CACHE, 'node_modules', 'better-sqlite3');
  const theirVersion = (JSON.parse(readFileSync(join(theirSqlite, 'package.json'), 'utf8')) as { version: string }).version;
  const ownBinary = join(ownSqlite, 'build', 'Release', 'better_sqlite3.node');
  if (theirVersion === sqliteVersion && existsSync(ownBinary)) {
    mkdirSync(join(theirSqlite, 'build', 'Release'), { recursive: true });
    copyFileSync(ownBinary, join(theirSqlite, 'build', 'Release', 'better_sqlite3.node'));
  } else {
    npm(['rebuild', '--prefix', CACHE, 'better-sqlite3']);
  }
  const check = spawnSync(process.execPath, ['-e', "new (require('better-sqlite3'))(':memory:').close()"], { cwd: CACHE, encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`promptfoo's better-sqlite3 does not load: ${check.stderr.slice(-300)}`);
  writeFileSync(ready, `${VERSION}\n`);
  return entry;
}

/** The RSS of `root` and every process below it, bytes (one pass over /proc). */
function treeRss(root: number): number {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited between the listing and the read
    }
  }
  let bytes = 0;
  for (const pid of parent.keys()) {
    let p: number | undefined = pid;
    while (p !== undefined && p > 1 && p !== root) p = parent.get(p);
    if (p !== root) continue;
    try {
      bytes += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE;
    } catch {
      // exited
    }
  }
  return bytes;
}

interface Sample {
  wall_s: number;
  cpu_s: number;
  rss_mb: number;
  stdout: string;
}

/** Runs `node args` under /usr/bin/time; the tree below /usr/bin/time is polled for RSS. */
function measure(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', '%U %S %M', process.execPath, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    let peak = 0;
    const poll = setInterval(() => {
      if (child.pid !== undefined) peak = Math.max(peak, treeRss(child.pid));
    }, 100);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(poll);
      const wall_s = Number(process.hrtime.bigint() - t0) / 1e9;
      if (code !== 0) return reject(new Error(`${args.slice(0, 3).join(' ')} exited ${code}: ${(stderr || stdout).slice(-800)}`));
      const [u, s, maxKb] = stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
      resolve({ wall_s, cpu_s: (u ?? NaN) + (s ?? NaN), rss_mb: Math.max(peak / 2 ** 20, (maxKb ?? 0) / 1024), stdout: stdout + stderr });
    });
  });
}

const entry = installPromptfoo();
const dir = mkdtempSync(join(tmpdir(), 'jb-peer-'));
try {
  // The same cases twice: joulebench's JSONL suite and promptfoo's JSONL tests.
  let suite = '';
  let tests = '';
  for (let i = 0; i < CASES; i++) {
    const prompt = `what is ${i}?`;
    suite += `${JSON.stringify({ id: `c${i}`, prompt, expected: prompt })}\n`;
    tests += `${JSON.stringify({ vars: { prompt }, assert: [{ type: 'icontains', value: prompt }] })}\n`;
  }
  writeFileSync(join(dir, 'suite.jsonl'), suite);
  writeFileSync(join(dir, 'tests.jsonl'), tests);
  writeFileSync(join(dir, 'promptfooconfig.yaml'), "prompts: ['{{prompt}}']\nproviders: [echo]\ntests: file://tests.jsonl\n");

  const pfEnv = {
    ...process.env,
    NO_COLOR: '1',
    PROMPTFOO_CONFIG_DIR: join(dir, 'promptfoo-home'),
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_CACHE_ENABLED: 'false',
    PROMPTFOO_DISABLE_DEBUG_LOG: '1',
    PROMPTFOO_DISABLE_ERROR_LOG: '1',
  };
  const jbEnv = { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: join(dir, 'jb-home') };
  const arms = {
    promptfoo: async (): Promise<Sample> => {
      const s = await measure([entry, 'eval', '-c', 'promptfooconfig.yaml', '--no-cache', '--no-write', '--no-share', '--no-table', '--no-progress-bar'], dir, pfEnv);
      const m = /Results: ✓ ([\d,]+) passed, ([\d,]+) failed, ([\d,]+) errors/.exec(s.stdout);
      if (!m || Number(m[1]!.replaceAll(',', '')) !== CASES) throw new Error(`promptfoo did not pass all ${CASES} cases: ${s.stdout.slice(-400)}`);
      return s;
    },
    joulebench: async (): Promise<Sample> => {
      const out = join(dir, 'r.json');
      rmSync(out, { force: true });
      const s = await measure([BIN, 'run', '-q', '--no-history', '--target', 'echo', '--suite', 'suite.jsonl', '-o', out, '--overwrite'], dir, jbEnv);
      const report = JSON.parse(readFileSync(out, 'utf8')) as { correct_count: number };
      if (report.correct_count !== CASES) throw new Error(`joulebench scored ${report.correct_count} of ${CASES} correct`);
      return s;
    },
  };
  type Arm = keyof typeof arms;
  const samples: Record<Arm, Sample[]> = { promptfoo: [], joulebench: [] };
  const load0 = loadavg();
  for (let r = 0; r < ROUNDS; r++) {
    const order: Arm[] = r % 2 === 0 ? ['promptfoo', 'joulebench'] : ['joulebench', 'promptfoo'];
    for (const arm of order) {
      const s = await arms[arm]();
      samples[arm].push(s);
      console.log(`  round ${r + 1} ${arm.padEnd(10)} wall ${s.wall_s.toFixed(2).padStart(7)} s  CPU ${s.cpu_s.toFixed(2).padStart(6)} s  peak RSS ${s.rss_mb.toFixed(0).padStart(4)} MB  (load ${loadavg()[0]!.toFixed(1)})`);
    }
  }
  const load1 = loadavg();
  const med = (arm: Arm, k: 'wall_s' | 'cpu_s' | 'rss_mb') => median(samples[arm].map((s) => s[k]))!;
  const paired = (k: 'wall_s' | 'cpu_s' | 'rss_mb', jbOverPf: boolean) =>
    median(samples.promptfoo.map((p, i) => (jbOverPf ? samples.joulebench[i]![k] / p[k] : p[k] / samples.joulebench[i]![k])))!;
  const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  console.log(`promptfoo ${VERSION} and joulebench, ${CASES} echo cases each, median of ${ROUNDS} alternated rounds in this one run, Node ${process.version}`);
  console.log(`load average ${la(load0)} at the start, ${la(load1)} at the end (machine shared: absolute times move, the same-run ratios less)`);
  for (const arm of ['promptfoo', 'joulebench'] as const) {
    console.log(`  ${arm.padEnd(10)} wall ${med(arm, 'wall_s').toFixed(2).padStart(7)} s  CPU ${med(arm, 'cpu_s').toFixed(2).padStart(6)} s  peak RSS (process tree) ${med(arm, 'rss_mb').toFixed(0).padStart(4)} MB`);
  }
  console.log(
    `  speed, promptfoo wall ÷ joulebench wall: ${(med('promptfoo', 'wall_s') / med('joulebench', 'wall_s')).toFixed(1)}× (paired per round: ${paired('wall_s', false).toFixed(1)}×; CPU ${(med('promptfoo', 'cpu_s') / med('joulebench', 'cpu_s')).toFixed(1)}×) — goal ≥ 10×`,
  );
  console.log(`  peak RSS, joulebench ÷ promptfoo: ${(med('joulebench', 'rss_mb') / med('promptfoo', 'rss_mb')).toFixed(2)}× (paired per round: ${paired('rss_mb', true).toFixed(2)}×) — goal ≤ 0.25×`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
