import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
