import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Reads a small text file (a sysfs attribute); injected in tests to simulate errors honestly. */
export type ReadText = (path: string) => string;

/** One powercap zone as found on disk. */
export interface PowercapZone {
  /** Directory entry, e.g. `intel-rapl:0`, `intel-rapl:0:2`, `intel-rapl-mmio:0`. */
  entry: string;
  /** Control type, e.g. `intel-rapl` or `intel-rapl-mmio`. */
  control: string;
  /** Top-level zones have no parent index. */
  index: number;
  subindex: number | null;
  /** The zone's `name` attribute, e.g. `package-0`, `dram`, `psys`, `core`. */
  name: string;
  dir: string;
}

/** A zone selected for summing, with the domain label the reports use. */
export interface RaplDomain {
  /** `package-0`, `psys`, `dram-0` (the DRAM of package 0). */
  domain: string;
  zone: PowercapZone;
}

/** What was selected and why the rest was left out, for the receipt. */
export interface RaplSelection {
  domains: RaplDomain[];
  /** One line per zone not summed, saying why. */
  skipped: string[];
  mode: 'package' | 'psys';
}

const ENTRY = /^(.+?):(\d+)(?::(\d+))?$/;

/**
 * Lists the zones under a powercap root: flat (`/sys/class/powercap`) or nested as in the device tree a
 * container often mounts (subzones inside packages, packages inside `intel-rapl/`); each zone once.
 */
export function listZones(root: string, read: ReadText): PowercapZone[] {
  const zones: PowercapZone[] = [];
  const seen = new Set<string>();
  walkZones(root, read, zones, seen, 0);
  return zones.sort((a, b) => (a.entry < b.entry ? -1 : a.entry > b.entry ? 1 : 0));
}

function walkZones(parent: string, read: ReadText, zones: PowercapZone[], seen: Set<string>, depth: number): void {
  let entries: string[];
  try {
    entries = readdirSync(parent).sort();
  } catch (e) {
    if (depth === 0) throw e;
    return; // a file, or a folder we may not list: not a zone container
  }
  for (const entry of entries) {
    const m = ENTRY.exec(entry);
    const dir = join(parent, entry);
    if (!m) {
      // A control-type folder (`intel-rapl`) at the top may hold the zones themselves.
      if (depth === 0 && !entry.includes(':') && !entry.includes('.')) walkZones(dir, read, zones, seen, depth + 1);
      continue;
    }
    if (seen.has(entry)) continue;
    let name: string;
    try {
      name = read(join(dir, 'name')).trim();
    } catch {
      continue; // not a zone (or a zone without a name, which the kernel never makes)
    }
    zones.push({
      entry,
      control: m[1]!,
      index: Number(m[2]),
      subindex: m[3] === undefined ? null : Number(m[3]),
      name,
      dir,
    });
    seen.add(entry);
    // Subzones (`intel-rapl:0:2`) live inside their package in the device tree.
    if (m[3] === undefined && depth < 3) walkZones(dir, read, zones, seen, depth + 1);
  }
}

/**
 * DESIGN.md's domain rules: the `package-N` zones, `dram` only when asked, `psys` instead of (never with)
 * the packages, never `core`/`uncore`, and a zone seen through two interfaces once (`intel-rapl` first).
 */
export function selectDomains(zones: readonly PowercapZone[], opts: { dram: boolean }): RaplSelection {
  const skipped: string[] = [];
  const byPreference = [...zones].sort((a, b) => controlRank(a.control) - controlRank(b.control) || a.entry.localeCompare(b.entry));
  const seen = new Map<string, PowercapZone>();
  const candidates: RaplDomain[] = [];
  for (const z of byPreference) {
    const domain = domainOf(z, zones);
    if (domain === null) {
      skipped.push(`${z.entry} (${z.name}): ${z.name === 'core' || z.name === 'uncore' ? 'inside a package; never summed' : 'not a package, psys or dram zone'}`);
      continue;
    }
    const first = seen.get(domain);
    if (first) {
      skipped.push(`${z.entry} (${z.name}): same zone as ${first.entry}; counted once`);
      continue;
    }
    seen.set(domain, z);
    candidates.push({ domain, zone: z });
  }

  const psys = candidates.filter((d) => d.zone.name === 'psys');
  const kind = (d: RaplDomain): string => (d.zone.name === 'psys' ? 'psys' : d.zone.name === 'dram' ? 'dram' : 'package');
  if (psys.length > 0) {
    for (const d of candidates) {
      if (kind(d) !== 'psys') skipped.push(`${d.zone.entry} (${d.zone.name}): psys covers it; psys is used instead, never both`);
    }
    return { domains: psys, skipped, mode: 'psys' };
  }
  const domains: RaplDomain[] = [];
  for (const d of candidates) {
    if (kind(d) === 'dram' && !opts.dram) skipped.push(`${d.zone.entry} (${d.zone.name}): dram is added only when asked (--rapl-dram)`);
    else domains.push(d);
  }
  domains.sort((a, b) => a.domain.localeCompare(b.domain, 'en', { numeric: true }));
  return { domains, skipped, mode: 'package' };
}

function controlRank(control: string): number {
  return control === 'intel-rapl' ? 0 : 1;
}

/** The domain label of a zone, or `null` when it is never summed. */
function domainOf(z: PowercapZone, all: readonly PowercapZone[]): string | null {
  if (z.subindex === null) {
    if (/^package-\d+$/.test(z.name) || z.name === 'psys') return z.name;
    if (z.name === 'dram') return `dram-${z.index}`;
    return null;
  }
  if (z.name !== 'dram') return null;
  // A package's DRAM subzone is named plain `dram`; label it by its package so packages stay apart.
  const parent = all.find((p) => p.control === z.control && p.index === z.index && p.subindex === null);
  const pkg = parent ? /^package-(\d+)$/.exec(parent.name) : null;
  return `dram-${pkg ? pkg[1] : z.index}`;
}
