/**
 * Growth with suite size: `joulebench run` of a generated JSONL suite against the echo target at 10k,
 * 100k and 1M cases (the sizes can be given), one child each under /usr/bin/time: wall time, CPU time,
 * peak RSS, the ratio of each size's peak RSS to the first size's (the goal's figure), then the
 * marginal µs/case and MB/case between consecutive sizes, and (REBUILD=1) a rebuild of the report
 * from the largest results file (`joulebench report --json`). Goal: growth linear; peak RSS
 * at 1M within 1.5× of 10k (JSONL suites stream: src/suites/jsonl-stream.ts; the report's columns are
 * compact: src/core/number-column.ts; the young generation stays small: src/cli/heap-flags.ts).
 *
 * The runs pass `--bootstrap 0`: up to 20,000 cases (`--bootstrap-max-units`) the report's bootstrap
 * intervals cost B resamples × n cases of CPU (≈ 60 µs a case at the default B = 2000 here, more than
 * the run itself), which would hide the run's own growth at 10k; above that limit the intervals are
 * large-sample ones, O(n) after one sort. BOOTSTRAP=2000 in the environment measures with them.
 *
 *   npm run bench:scale            (or: node --import tsx bench/scale.bench.ts [10000,100000,1000000])
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SIZES = (process.argv[2] ?? '10000,100000,1000000').split(',').map(Number);
const BOOTSTRAP = process.env.BOOTSTRAP ?? '0';
const BIN = fileURLToPath(new URL('../bin/joulebench.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'jb-scale-'));
const env = { ...process.env, JOULEBENCH_HOME: dir, NO_COLOR: '1' };

interface Row {
  cases: number;
  wall_s: number;
  cpu_s: number;
  rss_mb: number;
}

function timed(args: string[]): Omit<Row, 'cases'> {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, '--max-old-space-size=8192', ...args], { env, encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall_s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr.slice(-500)}`);
  const [u, s, rss] = r.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wall_s, cpu_s: (u ?? 0) + (s ?? 0), rss_mb: (rss ?? 0) / 1024 };
}

try {
  const rows: Row[] = [];
  for (const n of SIZES) {
    const suite = join(dir, `s${n}.jsonl`);
    const fd = openSync(suite, 'w');
    let batch = '';
    for (let i = 0; i < n; i++) {
      batch += `{"id":"c${i}","prompt":"what is ${i}?","expected":"what is ${i}?"}\n`;
      if (batch.length > 1 << 20) {
        writeSync(fd, batch);
        batch = '';
      }
    }
    writeSync(fd, batch);
    closeSync(fd);
    rows.push({ cases: n, ...timed([BIN, 'run', '-q', '--no-history', '--target', 'echo', '--warmup', '0', '--bootstrap', BOOTSTRAP, '--suite', suite, '-o', join(dir, `r${n}.json`)]) });
    rmSync(suite);
  }
  const first = rows[0]!;
  console.log(`joulebench run, echo target, JSONL suite (streamed), --bootstrap ${BOOTSTRAP}, one run per size, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`  cases        wall s   CPU s   peak RSS MB   RSS / RSS at ${first.cases}   marginal µs/case (CPU)   marginal MB/case`);
  rows.forEach((r, i) => {
    const prev = rows[i - 1];
    const us = prev ? (((r.cpu_s - prev.cpu_s) / (r.cases - prev.cases)) * 1e6).toFixed(2) : '';
    const mb = prev ? ((r.rss_mb - prev.rss_mb) / (r.cases - prev.cases)).toExponential(2) : '';
    const ratio = `${(r.rss_mb / first.rss_mb).toFixed(2)}×`;
    console.log(`  ${String(r.cases).padStart(9)}  ${r.wall_s.toFixed(2).padStart(7)}  ${r.cpu_s.toFixed(2).padStart(6)}  ${r.rss_mb.toFixed(0).padStart(11)}   ${ratio.padStart(16 + String(first.cases).length)}   ${us.padStart(22)}   ${mb.padStart(16)}`);
  });
  const big = rows.at(-1)!;
  if (rows.length > 1) {
    console.log(`  peak RSS at ${big.cases} / peak RSS at ${first.cases}: ${(big.rss_mb / first.rss_mb).toFixed(2)}× (goal at 1,000,000 / 10,000: ≤ 1.50×)`);
  }
  if (process.env.REBUILD === '1') {
    const rebuild = timed([BIN, 'report', '--json', join(dir, `r${big.cases}.results.jsonl`)]);
    console.log(`  report rebuilt from the ${big.cases}-case results file: wall ${rebuild.wall_s.toFixed(2)} s, CPU ${rebuild.cpu_s.toFixed(2)} s, peak RSS ${rebuild.rss_mb.toFixed(0)} MB`);
  } else {
    console.log('  (report rebuild skipped: REBUILD=1 times it; npm run bench:report measures rebuilds on their own)');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
