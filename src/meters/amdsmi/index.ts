import { existsSync } from 'node:fs';
import { firstLine, type Meter } from '../meter.js';
import { createGpuMeter, gpuState, modeSource, type GpuState } from '../gpu.js';
import { AMDSMI_LIBRARY, AMDSMI_STATUS_NOT_SUPPORTED, AmdSmiError, loadAmdSmiBinding, type AmdSmiBinding, type AmdSmiProcessor } from './binding.js';
import { rocmVisibleDevices } from './visible.js';

/** The shortest window the energy counter resolves, ms: conservative, as AMD does not document its refresh period. */
const AMDSMI_FLOOR_MS = 100;
/** Background sampling interval while a window is open, ms (power integration, and seeing every wrap). */
const AMDSMI_DEFAULT_POLL_MS = 100;
/**
 * Per GPU, above this power a backwards step is a reset (dropped), not a 32-bit wrap, and a forward step
 * (over at least 1 s) a garbage read (dropped). Well above any AMD board power (MI300X: 750 W).
 */
const AMDSMI_DEFAULT_MAX_WATTS = 2000;

const WRAP_32 = 2n ** 32n;

export interface AmdSmiOptions {
  /** Injected in tests; default: koffi onto `libamd_smi.so` (or `library`), loaded on first probe. */
  binding?: AmdSmiBinding | (() => Promise<AmdSmiBinding>);
  /** The shared library to bind (a path or a name ld.so resolves); given, the driver check is skipped. */
  library?: string;
  /** `ROCR_VISIBLE_DEVICES` and `HIP_VISIBLE_DEVICES` as the environment has them. */
  rocr_visible_devices?: string | undefined;
  hip_visible_devices?: string | undefined;
  poll_ms?: number;
  max_watts?: number;
  now?: () => number;
}

interface Gpu extends GpuState {
  processor: AmdSmiProcessor;
  /** µJ per tick: `counter` mode reads the accumulator × this; `power` mode integrates `current_socket_power`. */
  resolution_uj: number | null;
  /** Energy accumulated since set-up, µJ (both modes). */
  total_uj: number;
  last_ticks: bigint | null;
  last_w: number | null;
  last_ms: number | null;
}

/**
 * The AMD SMI meter: per GPU, the energy counter × its resolution, polled so every 32-bit wrap is seen
 * (`amdsmi`), or `current_socket_power` integrated (`integrated-power`). Honours ROCR/HIP_VISIBLE_DEVICES.
 */
export function createAmdSmiMeter(opts: AmdSmiOptions = {}): Meter {
  const poll_ms = opts.poll_ms ?? AMDSMI_DEFAULT_POLL_MS;
  const max_watts = opts.max_watts ?? AMDSMI_DEFAULT_MAX_WATTS;
  const library = opts.library ?? AMDSMI_LIBRARY;

  function setUpGpu(binding: AmdSmiBinding, index: number, processor: AmdSmiProcessor): Gpu {
    const gpu: Gpu = {
      ...gpuState(index, binding.uuid(processor)),
      processor,
      resolution_uj: null,
      total_uj: 0,
      last_ticks: null,
      last_w: null,
      last_ms: null,
    };
    try {
      const c = binding.energyCount(processor);
      if (!(c.resolution_uj > 0) || !Number.isFinite(c.resolution_uj)) throw new AmdSmiError(-1, `amdsmi_get_energy_count: resolution ${c.resolution_uj} µJ is not a positive number`);
      gpu.resolution_uj = c.resolution_uj;
    } catch (e) {
      if (!(e instanceof AmdSmiError && e.amdsmi_status === AMDSMI_STATUS_NOT_SUPPORTED)) throw e;
      try {
        binding.power_w(processor);
      } catch (p) {
        throw new Error(`${gpu.domain} has neither an energy counter nor a power reading (${firstLine(p)})`);
      }
      gpu.mode = 'power';
    }
    return gpu;
  }

  /** Brings one GPU's running total up to now: counter delta (wrap-aware), or a power trapezoid. False: the read failed. */
  function sample(binding: AmdSmiBinding | null, g: Gpu, t: number): boolean {
    if (!binding) return false;
    if (g.mode === 'power') {
      let w: number;
      try {
        w = binding.power_w(g.processor);
      } catch {
        return false; // the next sample spans the gap
      }
      if (g.last_w !== null && g.last_ms !== null) g.total_uj += ((g.last_w + w) / 2) * (t - g.last_ms) * 1000;
      g.last_w = w;
      g.last_ms = t;
      return true;
    }
    let ticks: bigint;
    try {
      ticks = binding.energyCount(g.processor).ticks;
    } catch (e) {
      fault(g, `the energy counter did not read (${firstLine(e)})`);
      return false;
    }
    const last = g.last_ticks;
    const dt_ms = g.last_ms === null ? null : t - g.last_ms;
    g.last_ticks = ticks;
    g.last_ms = t;
    if (last === null) return true;
    if (ticks >= last) {
      const delta_uj = Number(ticks - last) * g.resolution_uj!;
      // A garbage read (a glitch to a huge value) is refused, judged over at least a second (coarse refresh steps).
      if (dt_ms !== null && delta_uj / Math.max(dt_ms, 1000) / 1000 > max_watts) {
        fault(g, `the energy counter jumped by ${Math.round(delta_uj / 1e6)} J in ${Math.round(dt_ms)} ms (more than ${max_watts} W): not believed`);
        return false;
      }
      g.total_uj += delta_uj;
      return true;
    }
    // Backwards: a wrap only from below 2^32 and only if the energy it implies is possible in the time passed; else a reset.
    const wrapped_uj = Number(WRAP_32 - last + ticks) * g.resolution_uj!;
    const plausible = last < WRAP_32 && dt_ms !== null && dt_ms > 0 && wrapped_uj / dt_ms / 1000 <= max_watts;
    if (plausible) {
      g.total_uj += wrapped_uj;
      g.wraps++;
      return true;
    }
    fault(g, `the energy counter went backwards (${last} → ${ticks} ticks): a reset, not a wrap`);
    return false;
  }

  function fault(g: Gpu, why: string): void {
    g.epoch++;
    g.fault = why;
    g.last_ticks = null;
  }

  return createGpuMeter<AmdSmiBinding, Gpu>({
    id: 'amdsmi',
    library,
    label: 'AMD SMI',
    binding: opts.binding,
    noDriver: () =>
      opts.library !== undefined || existsSync('/dev/kfd') || existsSync('/sys/module/amdgpu')
        ? null
        : {
            reason: 'no AMD GPU driver on this machine (/dev/kfd and /sys/module/amdgpu are absent)',
            fix: 'install the amdgpu driver and ROCm, or pass the GPUs into the container (--device /dev/kfd --device /dev/dri)',
          },
    load: () => loadAmdSmiBinding(library),
    fix: {
      load: 'install ROCm (it ships AMD SMI) and add /opt/rocm/lib to the library path',
      setUp: 'check the GPUs with amd-smi; hide a GPU that cannot be metered with ROCR_VISIBLE_DEVICES',
      visible: 'unset ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES or list GPU indices in them',
    },
    visible: { ROCR_VISIBLE_DEVICES: opts.rocr_visible_devices, HIP_VISIBLE_DEVICES: opts.hip_visible_devices },
    gpus: 'AMD GPU',
    ignored_key: 'visible_devices_ignored',
    poll_ms,
    now: opts.now,
    devices(binding) {
      const processors = binding.processors();
      const vis = rocmVisibleDevices({ rocr: opts.rocr_visible_devices, hip: opts.hip_visible_devices }, processors.length);
      return { ...vis, gpu: (index) => setUpGpu(binding, index, processors[index]) };
    },
    sample_at_set_up: true,
    detail: (g) => `${g.domain}${g.mode === 'power' ? ' (integrated power)' : ` (counter, ${g.resolution_uj} µJ/tick)`}`,
    sample,
    energy: (_, g) => g.total_uj,
    per_joule: 1e6,
    polled: () => true,
    floor_ms: (gpus) => (gpus.some((g) => g.mode === 'power') ? Math.max(AMDSMI_FLOOR_MS, poll_ms) : AMDSMI_FLOOR_MS),
    settings: { poll_ms, wrap_max_watts: max_watts },
    describeGpu: (g) => ({ domain: g.domain, amdsmi_index: g.index, uuid: g.uuid, source: modeSource(g.mode, 'amdsmi'), resolution_uj: g.resolution_uj }),
  });
}
