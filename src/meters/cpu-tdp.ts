import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import table from './data/cpu-tdp.json' with { type: 'json' };

/** Where the estimate's watts per busy core came from, with the label the receipt and probe show. */
export interface CpuCoefficient {
  watts_per_core: number;
  /** `table`: the CPU's TDP found in data/cpu-tdp.json; `flat`: no match, the default figure; `configured`: a flag or the environment. */
  basis: 'table' | 'flat' | 'configured';
  /** e.g. `estimate: Intel Xeon Gold 6338 TDP 205 W (table)`. */
  label: string;
  cpu_model: string | null;
  tdp_w?: number;
  sockets?: number;
  logical_cpus?: number;
}

/** The facts /proc/cpuinfo gives: the first model name, packages (distinct `physical id`), logical CPUs. */
interface CpuInfo {
  model: string | null;
  sockets: number;
  logical_cpus: number;
}

/** Lower case, `(R)`/`(TM)`/`CPU`/`@ x GHz`/`N-Core Processor` dropped, punctuation removed (as CodeCarbon normalises). */
function normaliseCpuName(name: string): string[] {
  return name
    .replace(/\((r|tm)\)/gi, '')
    .replace(/@.*$/, '')
    .replace(/\b\d+-core\b|\bcpu\b|\bprocessor\b/gi, '')
    .toLowerCase()
    .replace(/[^\w\s]/g, '')
    .split(/\s+/)
    .filter(Boolean);
}

/** The table entry every token of which is in the machine's name, the longest such; null when none. */
export function matchTdp(model: string): { name: string; tdp_w: number } | null {
  const have = new Set(normaliseCpuName(model));
  let best: { name: string; tdp_w: number; n: number } | null = null;
  for (const [name, tdp_w] of Object.entries(table.tdp_w)) {
    const want = normaliseCpuName(name);
    if (want.every((t) => have.has(t)) && (!best || want.length > best.n)) best = { name, tdp_w, n: want.length };
  }
  return best && { name: best.name, tdp_w: best.tdp_w };
}

/** Reads `<root>/proc/cpuinfo`; on the real root without one (macOS, Windows), what the OS says. */
export function readCpuInfo(root = '/'): CpuInfo | null {
  let text: string;
  try {
    text = readFileSync(join(root, 'proc', 'cpuinfo'), 'utf8');
  } catch {
    if (root !== '/') return null;
    const list = cpus();
    return list.length === 0 ? null : { model: list[0]!.model.trim() || null, sockets: 1, logical_cpus: list.length };
  }
  let model: string | null = null;
  let logical = 0;
  const packages = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^([^:]+?)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'processor') logical++;
    else if (m[1] === 'model name' && model === null) model = m[2]!.trim() || null;
    else if (m[1] === 'physical id') packages.add(m[2]!);
  }
  return logical === 0 ? null : { model, sockets: Math.max(1, packages.size), logical_cpus: logical };
}

/**
 * CodeCarbon's method: power = TDP × CPU load. A CPU-second on one of N logical CPUs is then
 * TDP × packages ÷ N joules, so that is the watts per busy core; no match: the flat figure.
 */
export function cpuCoefficient(info: CpuInfo | null, flat_w: number): CpuCoefficient {
  const hit = info?.model ? matchTdp(info.model) : null;
  if (!info || !hit) {
    const why = info?.model ? `no TDP match for ${JSON.stringify(info.model)}` : 'CPU model unknown';
    return { watts_per_core: flat_w, basis: 'flat', label: `estimate: flat ${flat_w} W/core (${why})`, cpu_model: info?.model ?? null };
  }
  const w = (hit.tdp_w * info.sockets) / info.logical_cpus;
  return {
    watts_per_core: w,
    basis: 'table',
    label: `estimate: ${hit.name} TDP ${hit.tdp_w} W (table)`,
    cpu_model: info.model,
    tdp_w: hit.tdp_w,
    sockets: info.sockets,
    logical_cpus: info.logical_cpus,
  };
}
