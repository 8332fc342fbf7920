import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** One zone of a fake powercap tree, as the kernel lays it out. */
export interface FakeZone {
  /** Directory entry, e.g. `intel-rapl:0`, `intel-rapl:0:2`, `intel-rapl-mmio:0`. */
  entry: string;
  name: string;
  energy_uj?: number;
  /** A number, or `'unreadable'` (a directory where the file should be: reading it fails with EISDIR). */
  max_uj?: number | 'unreadable';
}

/** A powercap tree in a fresh temp folder (or under `base`), with control-type folders like the real one. */
export function writePowercapTree(zones: readonly FakeZone[], base?: string): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(base ?? tmpdir(), 'jb-powercap-'));
  for (const control of new Set(zones.map((z) => z.entry.split(':')[0]!))) {
    mkdirSync(join(root, control));
    writeFileSync(join(root, control, 'enabled'), '1\n');
  }
  for (const z of zones) {
    const dir = join(root, z.entry);
    mkdirSync(dir);
    writeFileSync(join(dir, 'name'), `${z.name}\n`);
    writeFileSync(join(dir, 'energy_uj'), `${z.energy_uj ?? 0}\n`);
    if (z.max_uj === 'unreadable') mkdirSync(join(dir, 'max_energy_range_uj'));
    else writeFileSync(join(dir, 'max_energy_range_uj'), `${z.max_uj ?? 262143328850}\n`);
    writeFileSync(join(dir, 'enabled'), '1\n');
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Sets a zone's counter atomically (write + rename), as a reader never sees a half-written sysfs file. */
export function setEnergy(root: string, entry: string, energy_uj: number): void {
  const path = join(root, entry, 'energy_uj');
  writeFileSync(`${path}.tmp`, `${energy_uj}\n`);
  renameSync(`${path}.tmp`, path);
}

/** A typical single-socket Intel server: package with core, uncore and dram subzones, plus the MMIO duplicate. */
export const INTEL_ONE_PACKAGE: FakeZone[] = [
  { entry: 'intel-rapl:0', name: 'package-0' },
  { entry: 'intel-rapl:0:0', name: 'core' },
  { entry: 'intel-rapl:0:1', name: 'uncore' },
];

/** A read of one counter file as a meter made it: when (the meter's own clock) and whether it succeeded. */
export interface LoggedRead {
  t: number;
  ok: boolean;
}

/**
 * Reads that log each read of `path` at the time the meter took for that sample (its clock's latest
 * reading), so a busy machine's pause between the two cannot make the test's log and the meter disagree.
 * Pass `now` and `read` to the meter.
 */
export function loggedReads(path: string): { log: LoggedRead[]; now: () => number; read: (p: string) => string } {
  const log: LoggedRead[] = [];
  let last_ms = 0;
  return {
    log,
    now: () => (last_ms = performance.now()),
    read: (p) => {
      try {
        const text = readFileSync(p, 'utf8');
        if (p === path) log.push({ t: last_ms, ok: true });
        return text;
      } catch (e) {
        if (p === path) log.push({ t: last_ms, ok: false });
        throw e;
      }
    },
  };
}

/** Makes a counter file unreadable (a directory: EISDIR) for `ms`, then restores it at `energy_uj()`; returns the hole's span. */
export async function unreadableFor(path: string, ms: number, energy_uj: () => number): Promise<{ from: number; to: number }> {
  const from = performance.now();
  rmSync(path);
  mkdirSync(path);
  await sleep(ms);
  rmSync(path, { recursive: true });
  writeFileSync(path, `${energy_uj()}\n`);
  return { from, to: performance.now() };
}

/** The longest gap the log shows across a hole: the last good read before it to the first good one after, ms. */
export function gapAcross(log: readonly LoggedRead[], hole: { from: number; to: number }): number {
  const before = log.filter((l) => l.ok && l.t <= hole.from).at(-1)!.t;
  return log.find((l) => l.ok && l.t >= hole.to)!.t - before;
}
