import { performance } from 'node:perf_hooks';
import { readCpuTimes, type CpuTimes } from './cpu-time.js';
import type { CpuCoefficient } from './cpu-tdp.js';
import type { EnergyReading, Meter, MeterWindow } from './meter.js';

/** Default watts per busy core: a round coefficient, not a measurement of any machine. */
export const DEFAULT_CPU_WATTS_PER_CORE = 10;
/** CPU time is accounted in scheduler ticks (children in 10 ms units): shorter windows are noise. */
const ESTIMATE_FLOOR_MS = 10;

/** Whose CPU time the estimate counts (see {@link EstimateOptions.cpu_scope}). */
type EstimateCpuScope = 'process' | 'children';

export interface EstimateOptions {
  /** Watts per busy core, multiplied by CPU time (`JOULEBENCH_CPU_WATTS_PER_CORE`). */
  cpu_watts_per_core?: number;
  /** Watts per busy core with where it came from (the CPU's TDP from the table); `cpu_watts_per_core` wins. */
  cpu_coefficient?: CpuCoefficient;
  /** Watts while active, multiplied by wall time (`JOULEBENCH_ACTIVE_WATTS`). */
  active_watts?: number;
  /** Whose CPU time counts: `process` (default, with waited-for children) or `children` only (`meter -- CMD`). */
  cpu_scope?: EstimateCpuScope;
  /** Injected in tests; default: this process plus its waited-for children. */
  cpuTimes?: () => CpuTimes;
  now?: () => number;
}

/**
 * The estimate: a coefficient, never a measurement. Domains `cpu` (CPU time × watts per busy core) and
 * `active` (wall × active watts); given only active watts the CPU term is off, given neither it runs at
 * the default. Marginal by construction: no idle is subtracted.
 */
export function createEstimateMeter(opts: EstimateOptions = {}): Meter {
  const active_watts = opts.active_watts ?? null;
  const coefficient: CpuCoefficient | null =
    opts.cpu_watts_per_core !== undefined
      ? { watts_per_core: opts.cpu_watts_per_core, basis: 'configured', label: `estimate: ${opts.cpu_watts_per_core} W/core (configured)`, cpu_model: null }
      : active_watts !== null
        ? null
        : (opts.cpu_coefficient ?? { watts_per_core: DEFAULT_CPU_WATTS_PER_CORE, basis: 'flat', label: `estimate: flat ${DEFAULT_CPU_WATTS_PER_CORE} W/core (default)`, cpu_model: null });
  const cpu_watts_per_core = coefficient?.watts_per_core ?? null;
  for (const [k, v] of [['cpu_watts_per_core', cpu_watts_per_core], ['active_watts', active_watts]] as const) {
    if (v !== null && !(Number.isFinite(v) && v >= 0)) throw new RangeError(`estimate: ${k} must be a number >= 0, got ${v}`);
  }
  const cpuTimes = opts.cpuTimes ?? (() => readCpuTimes());
  const now = opts.now ?? (() => performance.now());
  const scope = opts.cpu_scope ?? 'process';
  // Children only: unknown (null) where the platform does not say, rather than 0.
  const cpuMs = (t: CpuTimes): number | null => (scope === 'children' ? t.children_ms : t.self_ms + (t.children_ms ?? 0));

  return {
    id: 'estimate',
    source: 'estimate',
    floor_ms: ESTIMATE_FLOOR_MS,
    marginal: true,
    probe: async () => ({ available: true, detail: describeCoefficients(coefficient, active_watts) }),
    async start(): Promise<MeterWindow> {
      const t0 = now();
      const c0 = cpuTimes();
      return {
        async stop(): Promise<EnergyReading> {
          const c1 = cpuTimes();
          const window_ms = now() - t0;
          const by_domain: EnergyReading['by_domain'] = {};
          let sum: number | null = 0;
          if (cpu_watts_per_core !== null) {
            const a = cpuMs(c0);
            const b = cpuMs(c1);
            const j = a === null || b === null ? null : ((b - a) / 1000) * cpu_watts_per_core;
            by_domain.cpu = { joules: j, source: 'estimate' };
            sum = j;
          }
          if (active_watts !== null) {
            const j = (window_ms / 1000) * active_watts;
            by_domain.active = { joules: j, source: 'estimate' };
            if (sum !== null) sum += j;
          }
          return { joules: sum, source: 'estimate', by_domain, window_ms, below_floor: window_ms < ESTIMATE_FLOOR_MS };
        },
      };
    },
    describe: () => ({
      meter: 'estimate',
      note: 'a coefficient, never a measurement',
      coefficients: { cpu_watts_per_core, active_watts },
      ...(coefficient ? { cpu_coefficient: coefficient } : {}),
      cpu_time: `${scope === 'children' ? 'the waited-for children only' : 'this process plus its waited-for children'} (/proc/self/stat cutime+cstime, 10 ms ticks)`,
      floor_ms: ESTIMATE_FLOOR_MS,
    }),
  };
}

function describeCoefficients(cpu: CpuCoefficient | null, active: number | null): string {
  const parts: string[] = [];
  if (cpu !== null) parts.push(`CPU time × ${cpu.watts_per_core} W per busy core`);
  if (active !== null) parts.push(`wall × ${active} W active`);
  return `${cpu?.label ?? 'estimate'}: ${parts.join(' + ') || 'no coefficient (reads 0 J)'}`;
}
