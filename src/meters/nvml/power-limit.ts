import { JoulebenchError } from '../../core/errors.js';
import { shutdownQuietly } from '../gpu.js';
import { firstLine } from '../meter.js';
import { loadNvmlBinding, NVML_LIBRARY, type NvmlDevice, type NvmlPowerBinding } from './binding.js';
import { visibleDevices } from './visible.js';

/** Sets every visible GPU's power limit for an arm and puts the limits found at open back. */
export interface PowerLimiter {
  /** Sets the limit on every visible GPU, W. */
  set(watts: number): void;
  /** The limits found at open, set again; synchronous so a signal handler can call it before exiting. */
  restore(): void;
  /** For the receipt: each GPU's original limit and allowed range. */
  describe(): Record<string, unknown>;
  close(): void;
}

interface Gpu {
  index: number;
  uuid: string;
  device: NvmlDevice;
  original_mw: number;
  min_mw: number;
  max_mw: number;
}

/** Runs `work` with every visible GPU at `limit_w`, the original limits restored afterwards however it ends. */
export async function underLimit<T>(limiter: PowerLimiter | undefined, limit_w: number | null, work: () => Promise<T>): Promise<T> {
  if (limit_w === null || !limiter) return work();
  limiter.set(limit_w);
  try {
    return await work();
  } finally {
    limiter.restore();
  }
}

/**
 * Puts the original limits back when the process exits, whatever makes it (a signal handler's exit
 * included); a Ctrl-C no other listener handles exits 130. `say` gets the line for a restore that failed.
 * Returns the function that removes both hooks.
 */
export function restoreOnExit(limiter: PowerLimiter, say: (line: string) => void): () => void {
  const onExit = (): void => {
    try {
      limiter.restore();
    } catch (e) {
      say(`${(e as Error).message}; the GPU power limit was not restored: set it back with nvidia-smi -pl`);
    }
  };
  const onSigint = (): void => {
    if (process.listenerCount('SIGINT') === 1) process.exit(130);
  };
  process.once('exit', onExit);
  process.on('SIGINT', onSigint);
  return () => {
    process.off('exit', onExit);
    process.off('SIGINT', onSigint);
  };
}

/**
 * Zeus's power-limit arms: NVML's `nvmlDeviceSetPowerManagementLimit` on every GPU `CUDA_VISIBLE_DEVICES`
 * shows. Every asked-for limit is checked against each GPU's constraints before anything is set.
 */
export async function openPowerLimiter(limits_w: readonly number[], opts: { library?: string; cuda_visible_devices?: string | undefined; binding?: NvmlPowerBinding } = {}): Promise<PowerLimiter> {
  const library = opts.library ?? NVML_LIBRARY;
  let b: NvmlPowerBinding;
  try {
    b = opts.binding ?? (await loadNvmlBinding(library));
  } catch (e) {
    throw new JoulebenchError('E_METER', `--gpu-power-limits: cannot load ${library}: ${firstLine(e)} (install the NVIDIA driver, which ships NVML)`);
  }
  const gpus: Gpu[] = [];
  try {
    b.init();
    const handles = Array.from({ length: b.deviceCount() }, (_, i) => b.handleByIndex(i));
    const uuids = handles.map((h) => b.uuid(h));
    for (const index of visibleDevices(opts.cuda_visible_devices, uuids).indices) {
      const device = handles[index];
      const range = b.powerLimitRange_mw(device);
      gpus.push({ index, uuid: uuids[index]!, device, original_mw: b.powerLimit_mw(device), min_mw: range.min, max_mw: range.max });
    }
  } catch (e) {
    throw new JoulebenchError('E_METER', `--gpu-power-limits: NVML: ${firstLine(e)}`);
  }
  if (gpus.length === 0) throw new JoulebenchError('E_USAGE', '--gpu-power-limits: no GPU visible to set a limit on');
  for (const g of gpus) {
    const bad = limits_w.find((w) => w * 1000 < g.min_mw || w * 1000 > g.max_mw);
    if (bad !== undefined) throw new JoulebenchError('E_USAGE', `--gpu-power-limits: ${bad} W is outside GPU ${g.index}'s range ${g.min_mw / 1000}–${g.max_mw / 1000} W`);
  }
  const setAll = (mw: (g: Gpu) => number): void => {
    for (const g of gpus) {
      try {
        b.setPowerLimit_mw(g.device, Math.round(mw(g)));
      } catch (e) {
        throw new JoulebenchError('E_METER', `--gpu-power-limits: GPU ${g.index}: ${firstLine(e)} (setting a power limit needs root)`);
      }
    }
  };
  return {
    set: (w) => setAll(() => w * 1000),
    restore: () => setAll((g) => g.original_mw),
    describe: () => ({ library, gpus: gpus.map((g) => ({ nvml_index: g.index, uuid: g.uuid, original_limit_w: g.original_mw / 1000, min_w: g.min_mw / 1000, max_w: g.max_mw / 1000 })) }),
    close: () => shutdownQuietly(b, true),
  };
}
