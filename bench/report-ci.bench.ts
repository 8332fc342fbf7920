/**
 * `npm run bench:ci [sizes] [trials] [old-up-to]` — CPU time of a report's intervals (`reportCi`) at 10k, 100k and
 * 1M cases: the percentile bootstrap at every size (the old method, `--bootstrap-max-units inf`)
 * against the default (the bootstrap up to 20,000 cases, the large-sample intervals above), 2000
 * resamples, side by side in one process, arms alternated, median of `trials` (the bootstrap at 1M
 * and above: one trial, it takes minutes). Synthetic cases: one pass, joules 1 + Exp(1), 60 % correct,
 * dollars ∝ joules, latency floor(1000·Exp(1)) ms. `old-up-to`: run the old arm only up to this many
 * cases (the bootstrap at 1M takes minutes of CPU, far more on a loaded machine).
 */
import { loadavg } from 'node:os';
import { reportCi, type CaseColumns } from '../src/stats/report-ci.js';
import { seededRng } from '../src/stats/rng.js';

const args = process.argv.slice(2);
const sizes = (args[0] ?? '10000,100000,1000000').split(',').map(Number);
const trials = Number(args[1] ?? 3);
const oldUpTo = Number(args[2] ?? Infinity);
if (sizes.some((n) => !(Number.isInteger(n) && n >= 2)) || !(Number.isInteger(trials) && trials >= 1) || !(oldUpTo >= 0)) {
  console.error('usage: bench/report-ci.bench.ts [sizes, e.g. 10000,100000,1000000] [trials] [old-up-to]');
  process.exit(2);
}

function columns(n: number): CaseColumns {
  const rng = seededRng(`bench-ci-${n}`);
  const u = () => (rng.nextU32() + 0.5) / 4294967296;
  const cols = {
    unit: Float64Array.from({ length: n }, (_, i) => i),
    pass: new Float64Array(n),
    passed: new Float64Array(n),
    weight: new Float64Array(n).fill(1),
    joules: new Float64Array(n),
    usd: new Float64Array(n),
    latency_ms: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    cols.passed[i] = u() < 0.6 ? 1 : 0;
    cols.joules[i] = 1 - Math.log(u());
    cols.usd[i] = 0.001 * cols.joules[i]!;
    cols.latency_ms[i] = Math.floor(-1000 * Math.log(u()));
  }
  return cols;
}

function cpuMs(f: () => void): number {
  const t = process.cpuUsage();
  f();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1000;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const opts = { seed: 'sha256:bench-ci', resamples: 2000, joulesUnknown: null, usdUnknown: null };

console.log(`reportCi CPU, 2000 resamples; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('| cases | bootstrap at any size (old) | default: large-sample above 20,000 (new) | old ÷ new | new µs/case |');
console.log('|---:|---:|---:|---:|---:|');
for (const n of sizes) {
  const cols = columns(n);
  const old: number[] = [];
  const now: number[] = [];
  let method = '';
  for (let t = 0; t < trials; t++) {
    if (n <= oldUpTo && (t === 0 || n < 1_000_000)) old.push(cpuMs(() => reportCi(cols, { ...opts, maxUnits: Infinity })));
    now.push(cpuMs(() => (method = reportCi(cols, opts).latency_p95_ms?.method ?? 'none')));
  }
  const o = old.length > 0 ? median(old) : null;
  const m = median(now);
  const oldText = o === null ? 'not run' : `${(o / 1000).toFixed(2)} s`;
  const ratio = o === null ? '' : `${(o / m).toFixed(0)}×`;
  console.log(`| ${n.toLocaleString('en')} | ${oldText} | ${(m / 1000).toFixed(3)} s (${method}) | ${ratio} | ${((m * 1000) / n).toFixed(2)} |`);
}
console.log(`load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
