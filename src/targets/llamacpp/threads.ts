import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

/** The thread count llama.cpp gets when none is configured, and how it was chosen (for the receipt). */
export type ThreadChoice = { threads: number; threads_source: string };

/** `$JOULEBENCH_CPU_ROOT`, else `/`: the root the CPU topology, affinity and cgroup files are read under. */
export function defaultCpuRoot(env: NodeJS.ProcessEnv = process.env): string {
  const r = env.JOULEBENCH_CPU_ROOT;
  return r !== undefined && r.trim() !== '' ? r : '/';
}

/**
 * llama.cpp's threads spin while they wait, so more threads than cores fight each other (10^4× slower
 * seen). The default: physical cores the affinity mask allows, capped by the cgroup quota and
 * `os.availableParallelism()`; the engine then caps it at the CPUs found idle ({@link capAtIdle}).
 * `root`: where `proc/` and `sys/` are read (a folder a test writes); `available_parallelism`: tests.
 */
export function defaultThreadChoice(opts: { root?: string; available_parallelism?: number } = {}): ThreadChoice & { allowed: number[] | null } {
  const root = opts.root ?? '/';
  const parallelism = opts.available_parallelism ?? availableParallelism();
  const allowedList = readAllowedList(root);
  const allowed = allowedList === null ? null : parseCpuList(allowedList);
  const cores = physicalCores(root, allowed);
  const quota = cgroupQuota(root);
  const parts = [allowed !== null ? `affinity ${allowedList} (${allowed.length} logical CPUs)` : 'affinity unreadable'];
  if (cores !== null) parts.push(`${cores.count} physical cores among them (${cores.from})`);
  else parts.push(allowed !== null ? 'physical cores unreadable: logical CPUs counted' : 'physical cores unreadable');
  parts.push(quota !== null ? `cgroup quota ${quota.cpus.toFixed(1)} (${quota.from})` : 'cgroup quota none', `availableParallelism ${parallelism}`);
  const threads = Math.max(1, Math.min(parallelism, cores?.count ?? allowed?.length ?? Infinity, quota ? Math.floor(quota.cpus) : Infinity));
  return { threads, threads_source: `physical cores allowed (${parts.join('; ')})`, allowed };
}

/** How long the idle CPUs are sampled before the model loads, ms. */
const IDLE_SAMPLE_MS = 250;

/** The CPUs among `allowed` (all when `null`) idle over `window_ms`, from two reads of `/proc/stat`; `null`: unreadable. */
export async function idleCpus(root: string, allowed: number[] | null, window_ms = IDLE_SAMPLE_MS, wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))): Promise<number | null> {
  const first = readCpuTimes(root);
  if (first === null) return null;
  await wait(window_ms);
  const second = readCpuTimes(root);
  if (second === null) return null;
  let idle = 0;
  let counted = 0;
  for (const [cpu, b] of second) {
    const a = first.get(cpu);
    if (a === undefined || (allowed !== null && !allowed.includes(cpu))) continue;
    const total = b.total - a.total;
    if (!(total > 0)) continue;
    idle += Math.min(1, Math.max(0, (b.idle - a.idle) / total));
    counted++;
  }
  return counted === 0 ? null : idle;
}

/** Caps a default choice at the allowed CPUs left idle (at least 1): spinning llama.cpp threads collapse waiting for a core. */
export function capAtIdle(choice: ThreadChoice, idle: number | null, window_ms = IDLE_SAMPLE_MS): ThreadChoice {
  if (idle === null) return { ...choice, threads_source: `${choice.threads_source}; idle CPUs unreadable` };
  const free = Math.max(1, Math.round(idle));
  const seen = `${idle.toFixed(1)} CPUs idle over ${window_ms} ms before loading`;
  if (free >= choice.threads) return { ...choice, threads_source: `${choice.threads_source}; ${seen}` };
  return { threads: free, threads_source: `${choice.threads_source}; ${seen} (other processes busy on the rest): ${free}` };
}

/** Per-CPU `{idle, total}` jiffies from `/proc/stat`'s `cpuN` lines; `null` when unreadable. */
function readCpuTimes(root: string): Map<number, { idle: number; total: number }> | null {
  const text = readText(join(root, 'proc', 'stat'));
  if (text === null) return null;
  const out = new Map<number, { idle: number; total: number }>();
  for (const m of text.matchAll(/^cpu(\d+)\s+(.+)$/gm)) {
    const f = m[2]!.trim().split(/\s+/).map(Number);
    if (f.length < 4 || f.some((v) => !Number.isFinite(v) || v < 0)) return null;
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const total = f.slice(0, 8).reduce((t, v) => t + v, 0);
    out.set(Number(m[1]), { idle: f[3]! + (f[4] ?? 0), total });
  }
  return out.size > 0 ? out : null;
}

/** A decode rate below this fraction of another at the same model is a collapse, not a configuration difference. */
const COLLAPSE_FRACTION = 0.1;

/** The warning for a first case decoding far slower than one thread did: oversubscribed threads; else `null`. */
export function firstCaseCollapse(first_case_tok_s: number | null, probe_tok_s: number | null, threads: number): string | null {
  if (first_case_tok_s === null || probe_tok_s === null || !(probe_tok_s > 0) || threads <= 1) return null;
  if (first_case_tok_s >= probe_tok_s * COLLAPSE_FRACTION) return null;
  return (
    `llama.cpp decoded the first case at ${first_case_tok_s.toPrecision(3)} tok/s with ${threads} threads, under ${COLLAPSE_FRACTION} of the ` +
    `${probe_tok_s.toPrecision(3)} tok/s one thread did on the same model: oversubscribed threads (more llama.cpp threads than free cores; ` +
    `they spin against each other and against other processes); every timing and joule of this run carries it (try --threads 1)`
  );
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function readAllowedList(root: string): string | null {
  const status = readText(join(root, 'proc', 'self', 'status'));
  const m = status === null ? null : /^Cpus_allowed_list:\s*(\S+)\s*$/m.exec(status);
  return m ? m[1]! : null;
}

/** `0-3,8,10-11` → [0,1,2,3,8,10,11]; `null` for anything else. */
export function parseCpuList(list: string): number[] | null {
  const out = new Set<number>();
  for (const part of list.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    if (b < a || b - a > 65_536) return null;
    for (let i = a; i <= b; i++) out.add(i);
  }
  return out.size > 0 ? [...out].sort((x, y) => x - y) : null;
}

/** Distinct (package, core) pairs among the allowed CPUs: sysfs topology first, then /proc/cpuinfo. */
function physicalCores(root: string, allowed: number[] | null): { count: number; from: string } | null {
  const sysDir = join(root, 'sys', 'devices', 'system', 'cpu');
  let cpus = allowed;
  try {
    cpus ??= readdirSync(sysDir).flatMap((d) => /^cpu(\d+)$/.exec(d)?.[1] ?? []).map(Number);
  } catch {
    // no sysfs: /proc/cpuinfo below
  }
  const sysKeys = (cpus ?? []).map((c) => {
    const t = join(sysDir, `cpu${c}`, 'topology');
    const [pkg, core] = [readText(join(t, 'physical_package_id')), readText(join(t, 'core_id'))];
    return pkg === null || core === null ? null : `${pkg.trim()}:${core.trim()}`;
  });
  if (sysKeys.length > 0 && !sysKeys.includes(null)) return { count: new Set(sysKeys).size, from: 'sysfs topology' };
  const info = readText(join(root, 'proc', 'cpuinfo'));
  if (info === null) return null;
  const keys = new Set<string>();
  for (const block of info.split(/\n\s*\n/)) {
    const proc = /^processor\s*:\s*(\d+)/m.exec(block)?.[1];
    if (proc === undefined || (allowed !== null && !allowed.includes(Number(proc)))) continue;
    const pkg = /^physical id\s*:\s*(\d+)/m.exec(block)?.[1];
    const core = /^core id\s*:\s*(\d+)/m.exec(block)?.[1];
    if (pkg === undefined || core === undefined) return null;
    keys.add(`${pkg}:${core}`);
  }
  return keys.size > 0 ? { count: keys.size, from: '/proc/cpuinfo' } : null;
}

/** The tightest CPU quota over this process's cgroup and its ancestors (v2 `cpu.max`, v1 cfs), in CPUs; else `null`. */
function cgroupQuota(root: string): { cpus: number; from: string } | null {
  const self = readText(join(root, 'proc', 'self', 'cgroup'));
  if (self === null) return null;
  const base = join(root, 'sys', 'fs', 'cgroup');
  let best: { cpus: number; from: string } | null = null;
  const consider = (cpus: number, from: string): void => {
    if (Number.isFinite(cpus) && cpus > 0 && (best === null || cpus < best.cpus)) best = { cpus, from };
  };
  for (const line of self.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    const [, id, controllers, path] = m;
    if (id === '0' && controllers === '') {
      for (const dir of ancestors(base, path!)) {
        const max = readText(join(dir, 'cpu.max'))?.trim().split(/\s+/);
        if (!max || max[0] === 'max' || max.length < 2) continue;
        consider(Number(max[0]) / Number(max[1]), `cpu.max ${max[0]} ${max[1]}`);
      }
    } else if (controllers!.split(',').includes('cpu')) {
      for (const mount of [controllers!, 'cpu', 'cpu,cpuacct']) {
        for (const dir of ancestors(join(base, mount), path!)) {
          const q = Number(readText(join(dir, 'cpu.cfs_quota_us'))?.trim());
          const p = Number(readText(join(dir, 'cpu.cfs_period_us'))?.trim());
          if (q > 0 && p > 0) consider(q / p, `cpu.cfs_quota_us ${q} / cpu.cfs_period_us ${p}`);
        }
      }
    }
  }
  return best;
}

/** The cgroup's folder under `base` and each parent up to `base` (a container sees its own cgroup at the root). */
function ancestors(base: string, path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  const out: string[] = [];
  for (let i = parts.length; i >= 0; i--) out.push(join(base, ...parts.slice(0, i)));
  return out;
}
