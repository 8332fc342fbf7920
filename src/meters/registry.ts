import { JoulebenchError } from '../core/errors.js';
import type { Meter } from './meter.js';
import type { NvmlBinding } from './nvml/binding.js';
import { quote } from '../core/one-line.js';

/**
 * Settings a meter may read (from CLI flags or the environment the CLI passes in). Each factory reads
 * the keys it knows and validates them.
 */
export interface MeterOptions {
  /** RAPL: the powercap folder (default `/sys/class/powercap`). */
  powercap_root?: string;
  /** RAPL: add the DRAM zones. */
  rapl_dram?: boolean;
  /** RAPL: background poll interval, ms. */
  rapl_poll_ms?: number;
  /** NVML: `CUDA_VISIBLE_DEVICES` as the environment has it. */
  cuda_visible_devices?: string;
  /** NVML: power sampling interval where the energy counter is unsupported, ms. */
  nvml_poll_ms?: number;
  /** NVML: an injected binding (tests). */
  nvml_binding?: NvmlBinding | (() => Promise<NvmlBinding>);
  /** Estimate: watts per busy core. */
  cpu_watts_per_core?: number;
  /** Estimate: watts while active, × wall time. */
  active_watts?: number;
  /** Estimate: whose CPU time counts (default `process`; `meter -- CMD` asks for `children`). */
  estimate_cpu_scope?: 'process' | 'children';
  /** auto: what to use when no counter reads (default `model`: the target's own energy, else null). */
  auto_fallback?: 'model' | 'estimate';
  [key: string]: unknown;
}

export interface MeterFactory {
  summary: string;
  /** Heavy or native code (NVML) is imported here, so machines that never ask for it never load it. */
  create(opts: MeterOptions): Promise<Meter>;
}

async function rapl(opts: MeterOptions): Promise<Meter> {
  const { createRaplMeter } = await import('./rapl/index.js');
  return createRaplMeter({
    ...(opts.powercap_root !== undefined ? { root: opts.powercap_root } : {}),
    dram: opts.rapl_dram === true,
    ...(opts.rapl_poll_ms !== undefined ? { poll_ms: positive(opts.rapl_poll_ms, 'rapl_poll_ms') } : {}),
  });
}

async function nvml(opts: MeterOptions): Promise<Meter> {
  const { createNvmlMeter } = await import('./nvml/index.js');
  return createNvmlMeter({
    cuda_visible_devices: opts.cuda_visible_devices,
    ...(opts.nvml_poll_ms !== undefined ? { poll_ms: positive(opts.nvml_poll_ms, 'nvml_poll_ms') } : {}),
    ...(opts.nvml_binding !== undefined ? { binding: opts.nvml_binding } : {}),
  });
}

async function estimate(opts: MeterOptions): Promise<Meter> {
  const { createEstimateMeter } = await import('./estimate.js');
  return createEstimateMeter({
    ...(opts.cpu_watts_per_core !== undefined ? { cpu_watts_per_core: nonNegative(opts.cpu_watts_per_core, 'cpu_watts_per_core') } : {}),
    ...(opts.active_watts !== undefined ? { active_watts: nonNegative(opts.active_watts, 'active_watts') } : {}),
    ...(opts.estimate_cpu_scope !== undefined ? { cpu_scope: opts.estimate_cpu_scope } : {}),
  });
}

/** Every meter, in one explicit table. */
export const METERS: Record<string, MeterFactory> = {
  auto: {
    summary: "hardware counters where they read (RAPL and NVML), otherwise the target's own energy (null where it reports none); the report says which",
    async create(opts) {
      const { createAutoMeter } = await import('./auto.js');
      const raplMeter = await rapl(opts);
      return createAutoMeter({
        hardware: [raplMeter, await nvml(opts)],
        ...(opts.rapl_dram === true ? { required: [raplMeter] } : {}),
        estimate: await estimate(opts),
        fallback: opts.auto_fallback ?? 'model',
      });
    },
  },
  rapl: {
    summary: 'Linux powercap (Intel/AMD RAPL): package or psys counters, dram when asked, labelled rapl',
    create: rapl,
  },
  nvml: {
    summary: 'NVIDIA GPUs through NVML: the total-energy counter, or integrated power where unsupported',
    create: nvml,
  },
  composite: {
    summary: 'RAPL and NVML together over one window, each domain labelled (both must read)',
    async create(opts) {
      const { createCompositeMeter } = await import('./composite.js');
      return createCompositeMeter([await rapl(opts), await nvml(opts)], 'composite');
    },
  },
  estimate: {
    summary: 'CPU time × watts per busy core and/or wall × active watts: a coefficient, labelled estimate',
    create: estimate,
  },
  model: {
    summary: 'energy the target reports from its own cost model (the cascade stages), labelled model',
    async create() {
      const { createModelMeter } = await import('./model.js');
      return createModelMeter();
    },
  },
};

export async function createMeter(name: string, opts: MeterOptions = {}): Promise<Meter> {
  const factory = METERS[name];
  if (!factory) throw new JoulebenchError('E_USAGE', `--meter: unknown meter ${quote(name)} (known: ${Object.keys(METERS).join(', ')})`);
  return factory.create(opts);
}

function positive(v: unknown, key: string): number {
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) throw new JoulebenchError('E_CONFIG', `meter option ${key} must be a number > 0, got ${String(v)}`);
  return v;
}

function nonNegative(v: unknown, key: string): number {
  if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) throw new JoulebenchError('E_CONFIG', `meter option ${key} must be a number >= 0, got ${String(v)}`);
  return v;
}
