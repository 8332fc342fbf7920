import { existsSync } from 'node:fs';
import type { Meter } from '../meter.js';
import { createGpuMeter, gpuState, modeSource, type GpuState } from '../gpu.js';
import { loadNvmlBinding, NVML_ERROR_NOT_SUPPORTED, NVML_LIBRARY, NvmlError, type NvmlBinding, type NvmlDevice } from './binding.js';
import { visibleDevices } from './visible.js';

/** NVML's energy counter refreshes every ~20–100 ms: a shorter window can read 0. */
const NVML_FLOOR_MS = 100;
/** Power sampling interval when the energy counter is unsupported, ms. */
const NVML_DEFAULT_POLL_MS = 100;

export interface NvmlOptions {
  /** Injected in tests; default: koffi onto `libnvidia-ml.so.1`, loaded on first probe. */
  binding?: NvmlBinding | (() => Promise<NvmlBinding>);
  /** The value of `CUDA_VISIBLE_DEVICES` (the CLI passes the environment's). */
  cuda_visible_devices?: string | undefined;
  poll_ms?: number;
  now?: () => number;
}

interface Gpu extends GpuState {
  name: string;
  device: NvmlDevice;
  /** Integrated energy since setup, mJ (power mode only; counter mode reads total energy in mJ). */
  integrated_mj: number;
  last_mw: number | null;
  last_ms: number | null;
}

/** The NVML meter: per GPU, the total-energy counter at the window edges (`nvml`), or power integrated (`integrated-power`). */
export function createNvmlMeter(opts: NvmlOptions = {}): Meter {
  const poll_ms = opts.poll_ms ?? NVML_DEFAULT_POLL_MS;
  return createGpuMeter<NvmlBinding, Gpu>({
    id: 'nvml',
    library: NVML_LIBRARY,
    label: 'NVML',
    binding: opts.binding,
    noDriver: () =>
      existsSync('/proc/driver/nvidia/version') || existsSync('/dev/nvidiactl')
        ? null
        : {
            reason: 'no NVIDIA driver on this machine (/proc/driver/nvidia/version and /dev/nvidiactl are absent)',
            fix: 'install the NVIDIA driver, or pass the GPUs into the container (docker --gpus all)',
          },
    load: () => loadNvmlBinding(),
    fix: {
      load: 'install the NVIDIA driver (it ships NVML), or expose it to the container',
      setUp: 'check the driver with nvidia-smi; NVML needs a loaded NVIDIA kernel module',
      visible: 'unset CUDA_VISIBLE_DEVICES or list GPU indices or UUIDs in it',
    },
    visible: { CUDA_VISIBLE_DEVICES: opts.cuda_visible_devices },
    gpus: 'GPU',
    ignored_key: 'cuda_visible_devices_ignored',
    poll_ms,
    now: opts.now,
    devices(binding) {
      const handles = Array.from({ length: binding.deviceCount() }, (_, i) => binding.handleByIndex(i));
      const uuids = handles.map((h) => binding.uuid(h));
      const gpu = (index: number): Gpu => {
        const device = handles[index];
        const g: Gpu = { ...gpuState(index, uuids[index]!), name: binding.name(device), device, integrated_mj: 0, last_mw: null, last_ms: null };
        try {
          binding.totalEnergy_mj(device);
        } catch (e) {
          if (!(e instanceof NvmlError && e.nvml_code === NVML_ERROR_NOT_SUPPORTED)) throw e;
          binding.power_mw(device); // throws when power is unsupported too
          g.mode = 'power';
        }
        return g;
      };
      return { ...visibleDevices(opts.cuda_visible_devices, uuids), gpu };
    },
    sample_at_set_up: false,
    detail: (g) => `${g.domain} ${g.name}${g.mode === 'power' ? ' (integrated power)' : ''}`,
    /** Adds the energy since the previous power sample (trapezoid rule) for a power-mode GPU. */
    sample(binding, g, t) {
      if (g.mode !== 'power' || !binding) return true;
      let mw: number;
      try {
        mw = binding.power_mw(g.device);
      } catch {
        return false; // the next sample spans the gap
      }
      if (g.last_mw !== null && g.last_ms !== null) g.integrated_mj += (((g.last_mw + mw) / 2) * (t - g.last_ms)) / 1000;
      g.last_mw = mw;
      g.last_ms = t;
      return true;
    },
    energy: (binding, g) => (g.mode === 'counter' ? binding!.totalEnergy_mj(g.device) : g.integrated_mj),
    per_joule: 1000,
    // Power-mode GPUs are sampled on the poller; a counter alone is read at the window's edges.
    polled: (gpus) => gpus.some((g) => g.mode === 'power'),
    floor_ms: () => NVML_FLOOR_MS,
    settings: { power_poll_ms: poll_ms },
    describeGpu: (g) => ({ domain: g.domain, nvml_index: g.index, uuid: g.uuid, name: g.name, source: modeSource(g.mode, 'nvml') }),
  });
}
