import { Command, Option } from 'commander';
import { JoulebenchError } from '../core/errors.js';
import { quote } from '../core/one-line.js';
import { METERS, type MeterOptions } from '../meters/registry.js';
import { DEFAULT_IDLE_MS } from '../meters/idle.js';
import { MAX_WATTS } from '../core/bounds.js';
import { numberInRange, timerMs } from './options.js';

/** The meter flags `run` and `meter` share. */
export interface MeterFlags {
  /** Default `auto`. */
  meter?: string;
  powercapRoot?: string;
  raplDram?: boolean;
  idleMs?: number;
  /** `false` with `--no-idle`. */
  idle?: boolean;
  activeWatts?: number;
  cpuWattsPerCore?: number;
}

/** Adds `--meter`, `--powercap-root`, `--rapl-dram`, `--idle-ms`, `--no-idle` and the estimate's coefficients. */
export function addMeterFlags(cmd: Command): Command {
  return addMeterReadFlags(cmd.addOption(new Option('-m, --meter <name>', 'energy meter').choices(Object.keys(METERS)).default('auto')), true);
}

/** The flags that change what a meter reads, for a command that picks its meter itself (`infer`); with `idle`, the idle window's too. */
export function addMeterReadFlags(cmd: Command, idle = false): Command {
  cmd
    .option('--powercap-root <dir>', 'RAPL: the powercap folder (env JOULEBENCH_POWERCAP_ROOT; default /sys/class/powercap)')
    .option('--rapl-dram', 'RAPL: add the DRAM zones to the package zones');
  if (idle) {
    cmd
      .option('--idle-ms <ms>', 'idle calibration window before measuring, ms', timerMs(1), DEFAULT_IDLE_MS)
      .option('--no-idle', 'skip idle calibration (net energy is then unknown)');
  }
  return cmd
    .option('--active-watts <W>', 'estimate: watts while active × wall time (env JOULEBENCH_ACTIVE_WATTS)', watts)
    .option('--cpu-watts-per-core <W>', 'estimate: watts per busy core × CPU time (env JOULEBENCH_CPU_WATTS_PER_CORE; default 10)', watts);
}

/** Meter options from the flags, falling back to the environment the CLI was started with. */
export function meterOptionsFrom(flags: MeterFlags, env: NodeJS.ProcessEnv, extra: Partial<MeterOptions> = {}): MeterOptions {
  const opts: MeterOptions = { ...extra };
  const root = flags.powercapRoot ?? nonEmpty(env.JOULEBENCH_POWERCAP_ROOT);
  if (root !== undefined) opts.powercap_root = root;
  if (flags.raplDram) opts.rapl_dram = true;
  if (env.CUDA_VISIBLE_DEVICES !== undefined) opts.cuda_visible_devices = env.CUDA_VISIBLE_DEVICES;
  if (env.ROCR_VISIBLE_DEVICES !== undefined) opts.rocr_visible_devices = env.ROCR_VISIBLE_DEVICES;
  if (env.HIP_VISIBLE_DEVICES !== undefined) opts.hip_visible_devices = env.HIP_VISIBLE_DEVICES;
  const nvmlLib = nonEmpty(env.JOULEBENCH_NVML_LIBRARY);
  if (nvmlLib !== undefined) opts.nvml_library = nvmlLib;
  const amdLib = nonEmpty(env.JOULEBENCH_AMDSMI_LIBRARY);
  if (amdLib !== undefined) opts.amdsmi_library = amdLib;
  const cpuRoot = nonEmpty(env.JOULEBENCH_CPU_ROOT);
  if (cpuRoot !== undefined) opts.cpu_root = cpuRoot;
  const pmInterval = envNumber(env, 'JOULEBENCH_POWERMETRICS_INTERVAL_MS');
  if (pmInterval !== undefined) opts.powermetrics_interval_ms = pmInterval;
  const active = flags.activeWatts ?? envNumber(env, 'JOULEBENCH_ACTIVE_WATTS');
  if (active !== undefined) opts.active_watts = active;
  const perCore = flags.cpuWattsPerCore ?? envNumber(env, 'JOULEBENCH_CPU_WATTS_PER_CORE');
  if (perCore !== undefined) opts.cpu_watts_per_core = perCore;
  return opts;
}

/** The idle window length the flags ask for; 0 with `--no-idle`. */
export function idleMsFrom(flags: MeterFlags): number {
  return flags.idle === false ? 0 : (flags.idleMs ?? DEFAULT_IDLE_MS);
}

const watts = numberInRange(0, MAX_WATTS, { maxText: `must be <= ${MAX_WATTS} W` });

function envNumber(env: NodeJS.ProcessEnv, key: string): number | undefined {
  const v = nonEmpty(env[key]);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > MAX_WATTS) {
    throw new JoulebenchError('E_CONFIG', `environment ${key} must be a number from 0 to ${MAX_WATTS} (W), got ${quote(v)}`);
  }
  return n;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

