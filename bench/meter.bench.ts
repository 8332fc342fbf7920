/**
 * The cost of one meter read, as a ratio to a bare `fs.readFileSync` of the same file measured in
 * the same run (interleaved rounds, median of rounds):
 * - RAPL: one poll of a package counter on a powercap tree on tmpfs (/dev/shm), and a whole window
 *   (start + stop: two polls) — what each case pays;
 * - estimate: one CPU-time read (`process.cpuUsage()` + `/proc/self/stat`), and a whole window.
 * Run: npm run bench:meter
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readCpuTimes } from '../src/meters/cpu-time.js';
import { createEstimateMeter } from '../src/meters/estimate.js';
import { createRaplMeter } from '../src/meters/rapl/index.js';
import { RaplSampler } from '../src/meters/rapl/sampler.js';
import { listZones, selectDomains } from '../src/meters/rapl/zones.js';
import { writePowercapTree } from '../test/meters/powercap-tree.js';

const ROUNDS = 15;
const ITER = 2000;

/** ns per call of `fn`, over ITER calls. */
function time(fn: () => unknown): number {
  const t0 = performance.now();
  for (let i = 0; i < ITER; i++) fn();
  return ((performance.now() - t0) * 1e6) / ITER;
}

async function timeAsync(fn: () => Promise<unknown>, iter = ITER / 4): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < iter; i++) await fn();
  return ((performance.now() - t0) * 1e6) / iter;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};

const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
const scratch = mkdtempSync(join(base, 'jb-bench-'));
const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 123_456_789 }], scratch);
const energyPath = join(tree.root, 'intel-rapl:0', 'energy_uj');
const read = (p: string): string => readFileSync(p, 'utf8');
const sampler = new RaplSampler(selectDomains(listZones(tree.root, read), { dram: false }).domains, read, 1_000_000, () => performance.now());
const rapl = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
const estimate = createEstimateMeter();
await rapl.probe();

type Key = 'bare_energy' | 'rapl_poll' | 'rapl_window' | 'bare_stat' | 'estimate_read' | 'estimate_window';
const samples: Record<Key, number[]> = {
  bare_energy: [], rapl_poll: [], rapl_window: [], bare_stat: [], estimate_read: [], estimate_window: [],
};
for (let r = 0; r < ROUNDS; r++) {
  samples.bare_energy.push(time(() => readFileSync(energyPath, 'utf8')));
  samples.rapl_poll.push(time(() => sampler.sample()));
  samples.rapl_window.push(await timeAsync(async () => (await rapl.start()).stop()));
  samples.bare_stat.push(time(() => readFileSync('/proc/self/stat', 'utf8')));
  samples.estimate_read.push(time(() => readCpuTimes()));
  samples.estimate_window.push(await timeAsync(async () => (await estimate.start()).stop()));
}
await rapl.close?.();
tree.cleanup();
rmSync(scratch, { recursive: true, force: true });

const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)])) as Record<Key, number>;
const rows: [string, number, string, number][] = [
  ['rapl: one poll (read + parse + wrap check)', m.rapl_poll, 'readFileSync(energy_uj)', m.bare_energy],
  ['rapl: one window (start + stop)', m.rapl_window, 'readFileSync(energy_uj)', m.bare_energy],
  ['estimate: one CPU-time read', m.estimate_read, 'readFileSync(/proc/self/stat)', m.bare_stat],
  ['estimate: one window (start + stop)', m.estimate_window, 'readFileSync(/proc/self/stat)', m.bare_stat],
];
console.log(`meter read cost — node ${process.version}, tree on ${base}, median of ${ROUNDS} interleaved rounds`);
for (const [name, ns, baseName, baseNs] of rows) {
  console.log(`${name.padEnd(44)} ${(ns / 1000).toFixed(2).padStart(8)} µs   baseline ${baseName.padEnd(30)} ${(baseNs / 1000).toFixed(2).padStart(7)} µs   ratio ${(ns / baseNs).toFixed(2)}×`);
}
