import { JoulebenchError } from '../core/errors.js';
import type { Meter } from './meter.js';
import type { NvmlBinding } from './nvml/binding.js';
import { quote } from '../core/one-line.js';

/** Settings a meter may read (CLI flags, or the environment the CLI passes in); each factory validates its own. */
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
  /** NVML: the shared library to bind (default `libnvidia-ml.so.1`). */
  nvml_library?: string;
  /** AMD SMI: the shared library to bind (default `libamd_smi.so`). */
  amdsmi_library?: string;
  /** AMD SMI: `ROCR_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES` as the environment has them. */
  rocr_visible_devices?: string;
  hip_visible_devices?: string;
  /** AMD SMI: background sampling interval, ms. */
  amdsmi_poll_ms?: number;
  /** powermetrics: its sample interval, ms (also the meter's floor). */
  powermetrics_interval_ms?: number;
  /** powermetrics: the executable (default `powermetrics` on PATH). */
  powermetrics_command?: string;
  /** Estimate: watts per busy core. */
  cpu_watts_per_core?: number;
  /** Estimate: where `proc/cpuinfo` is read for the CPU's TDP (default `/`). */
  cpu_root?: string;
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
  const poll_ms = positive(opts.rapl_poll_ms, 'rapl_poll_ms');
  return createRaplMeter({ root: opts.powercap_root, dram: opts.rapl_dram === true, poll_ms });
}

async function nvml(opts: MeterOptions): Promise<Meter> {
  const { createNvmlMeter } = await import('./nvml/index.js');
  const library = opts.nvml_library;
  const load = library === undefined ? undefined : async () => (await import('./nvml/binding.js')).loadNvmlBinding(library);
  const poll_ms = positive(opts.nvml_poll_ms, 'nvml_poll_ms');
  return createNvmlMeter({ cuda_visible_devices: opts.cuda_visible_devices, poll_ms, binding: opts.nvml_binding ?? load });
}

async function amdsmi(opts: MeterOptions): Promise<Meter> {
  const { createAmdSmiMeter } = await import('./amdsmi/index.js');
  return createAmdSmiMeter({
    rocr_visible_devices: opts.rocr_visible_devices,
    hip_visible_devices: opts.hip_visible_devices,
    library: opts.amdsmi_library,
    poll_ms: positive(opts.amdsmi_poll_ms, 'amdsmi_poll_ms'),
  });
}

async function powermetrics(opts: MeterOptions): Promise<Meter> {
  const { createPowermetricsMeter } = await import('./powermetrics/index.js');
  const interval_ms = positive(opts.powermetrics_interval_ms, 'powermetrics_interval_ms');
  return createPowermetricsMeter({ command: opts.powermetrics_command, interval_ms });
}

async function estimate(opts: MeterOptions): Promise<Meter> {
  const { createEstimateMeter, DEFAULT_CPU_WATTS_PER_CORE } = await import('./estimate.js');
  const { cpuCoefficient, readCpuInfo } = await import('./cpu-tdp.js');
  const lookup = opts.cpu_watts_per_core === undefined && opts.active_watts === undefined;
  return createEstimateMeter({
    cpu_coefficient: lookup ? cpuCoefficient(readCpuInfo(opts.cpu_root ?? '/'), DEFAULT_CPU_WATTS_PER_CORE) : undefined,
    cpu_watts_per_core: positive(opts.cpu_watts_per_core, 'cpu_watts_per_core', true),
    active_watts: positive(opts.active_watts, 'active_watts', true),
    cpu_scope: opts.estimate_cpu_scope,
  });
}

/** Every meter, in one explicit table. */
export const METERS: Record<string, MeterFactory> = {
  auto: {
    summary: "hardware counters where they read (RAPL, NVML, AMD SMI; powermetrics on macOS), otherwise the target's own energy (null where it reports none); the report says which",
    async create(opts) {
      const { createAutoMeter } = await import('./auto.js');
      const raplMeter = await rapl(opts);
      return createAutoMeter({
        // powermetrics only on macOS, where it exists: elsewhere auto never spawns it.
        hardware: [raplMeter, await nvml(opts), await amdsmi(opts), ...(process.platform === 'darwin' ? [await powermetrics(opts)] : [])],
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
  amdsmi: {
    summary: 'AMD GPUs through AMD SMI (libamd_smi.so): the energy counter × its resolution, or integrated power where a GPU has none',
    create: amdsmi,
  },
  powermetrics: {
    summary: "macOS: CPU/GPU/ANE power sampled by powermetrics (needs root) and integrated over the window, labelled powermetrics",
    create: powermetrics,
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
    create: async () => (await import('./model.js')).createModelMeter(),
  },
};

export async function createMeter(name: string, opts: MeterOptions = {}): Promise<Meter> {
  const factory = Object.hasOwn(METERS, name) ? METERS[name] : undefined;
  if (!factory) throw new JoulebenchError('E_USAGE', `--meter: unknown meter ${quote(name)} (known: ${Object.keys(METERS).join(', ')})`);
  return factory.create(opts);
}

/** `v` when it is a finite number > 0 (>= 0 with `orZero`), or not set; E_CONFIG naming the option otherwise. */
function positive(v: unknown, key: string, orZero = false): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || !(orZero ? v >= 0 : v > 0)) {
    throw new JoulebenchError('E_CONFIG', `meter option ${key} must be a number ${orZero ? '>=' : '>'} 0, got ${String(v)}`);
  }
  return v;
}
