import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { firstLine, type EnergyReading, type Meter, type MeterProbe, type MeterWindow } from '../meter.js';
import { gpusSource, modeSource, shutdownQuietly, type GpuMode } from '../gpu.js';
import { Poller } from '../poller.js';
import { MAX_GAP_INTERVALS, WindowSamples } from '../validity.js';
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

interface Gpu {
  domain: string;
  index: number;
  uuid: string;
  processor: AmdSmiProcessor;
  /** `counter`: the energy accumulator × its resolution; `power`: `current_socket_power` integrated. */
  mode: GpuMode;
  resolution_uj: number | null;
  /** Energy accumulated since set-up, µJ (both modes). */
  total_uj: number;
  /** Bumped whenever the running total can no longer be trusted (reset, unreadable counter). */
  epoch: number;
  /** Why the last epoch was bumped. */
  fault: string | null;
  wraps: number;
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
  const now = opts.now ?? (() => performance.now());
  const library = opts.library ?? AMDSMI_LIBRARY;
  let binding: AmdSmiBinding | null = null;
  let gpus: Gpu[] = [];
  let ignored: string[] = [];
  let probed: MeterProbe | null = null;
  const poller = new Poller(sampleAll, poll_ms);
  /** The open windows' sample records. */
  const open = new Set<WindowSamples>();

  const setUp = async (): Promise<MeterProbe> => (probed ??= await inspect());

  async function inspect(): Promise<MeterProbe> {
    try {
      if (typeof opts.binding === 'object') binding = opts.binding;
      else if (typeof opts.binding === 'function') binding = await opts.binding();
      else {
        // Cheap check first, so machines without the amdgpu driver never load the FFI module.
        if (opts.library === undefined && !existsSync('/dev/kfd') && !existsSync('/sys/module/amdgpu')) {
          return {
            available: false,
            reason: 'no AMD GPU driver on this machine (/dev/kfd and /sys/module/amdgpu are absent)',
            fix: 'install the amdgpu driver and ROCm, or pass the GPUs into the container (--device /dev/kfd --device /dev/dri)',
          };
        }
        binding = await loadAmdSmiBinding(library);
      }
    } catch (e) {
      return { available: false, reason: `cannot load ${library}: ${firstLine(e)}`, fix: 'install ROCm (it ships AMD SMI) and add /opt/rocm/lib to the library path' };
    }
    try {
      binding.init();
      const processors = binding.processors();
      const vis = rocmVisibleDevices({ rocr: opts.rocr_visible_devices, hip: opts.hip_visible_devices }, processors.length);
      ignored = vis.ignored;
      gpus = [];
      for (const index of vis.indices) {
        const processor = processors[index];
        const gpu: Gpu = {
          domain: `gpu-${index}`,
          index,
          uuid: binding.uuid(processor),
          processor,
          mode: 'counter',
          resolution_uj: null,
          total_uj: 0,
          epoch: 0,
          fault: null,
          wraps: 0,
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
        gpus.push(gpu);
      }
    } catch (e) {
      return { available: false, reason: `AMD SMI: ${firstLine(e)}`, fix: 'check the GPUs with amd-smi; hide a GPU that cannot be metered with ROCR_VISIBLE_DEVICES' };
    }
    if (gpus.length === 0) {
      const vars = [
        opts.rocr_visible_devices !== undefined ? `ROCR_VISIBLE_DEVICES=${JSON.stringify(opts.rocr_visible_devices)}` : null,
        opts.hip_visible_devices !== undefined ? `HIP_VISIBLE_DEVICES=${JSON.stringify(opts.hip_visible_devices)}` : null,
      ].filter((v) => v !== null);
      return {
        available: false,
        reason: `no AMD GPU visible${vars.length > 0 ? ` (${vars.join(', ')})` : ''}`,
        fix: 'unset ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES or list GPU indices in them',
      };
    }
    for (const g of gpus) sample(g, now());
    const list = gpus.map((g) => `${g.domain}${g.mode === 'power' ? ' (integrated power)' : ` (counter, ${g.resolution_uj} µJ/tick)`}`).join(', ');
    return { available: true, detail: list };
  }

  /** Brings one GPU's running total up to now: counter delta (wrap-aware), or a power trapezoid. False: the read failed. */
  function sample(g: Gpu, t: number): boolean {
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

  function sampleAll(t = now()): void {
    let failed = 0;
    for (const g of gpus) if (!sample(g, t)) failed++;
    for (const w of open) {
      if (failed === 0) w.ok(t);
      w.failed_reads += failed;
    }
  }

  function floor(): number {
    return gpus.some((g) => g.mode === 'power') ? Math.max(AMDSMI_FLOOR_MS, poll_ms) : AMDSMI_FLOOR_MS;
  }

  return {
    id: 'amdsmi',
    source: 'amdsmi',
    get floor_ms() {
      return floor();
    },
    probe: () => setUp(),
    async start(): Promise<MeterWindow> {
      const p = await setUp();
      if (!p.available) throw new Error(`amdsmi meter cannot read: ${p.reason}`);
      const t0 = now();
      const samples = new WindowSamples(t0, MAX_GAP_INTERVALS * poll_ms);
      open.add(samples);
      poller.acquire();
      sampleAll(t0);
      const before = gpus.map((g) => ({ total_uj: g.total_uj, epoch: g.epoch, wraps: g.wraps }));
      return {
        async stop(): Promise<EnergyReading> {
          const t1 = now();
          sampleAll(t1);
          const window_ms = t1 - t0;
          open.delete(samples);
          poller.release();
          const by_domain: EnergyReading['by_domain'] = {};
          const warnings: string[] = [];
          let sum: number | null = 0;
          gpus.forEach((g, i) => {
            const b = before[i]!;
            const label = modeSource(g.mode, 'amdsmi');
            if (g.epoch !== b.epoch) {
              by_domain[g.domain] = { joules: null, source: label };
              warnings.push(`${g.domain}: ${g.fault ?? 'the counter could not be followed'}; its energy over this window is unknown`);
              sum = null;
              return;
            }
            const j = (g.total_uj - b.total_uj) / 1e6;
            by_domain[g.domain] = { joules: j, source: label };
            if (sum !== null) sum += j;
            const wraps = g.wraps - b.wraps;
            samples.wraps += wraps;
            if (wraps > 0) warnings.push(`${g.domain}: the 32-bit energy counter wrapped ${wraps} time(s) in this window (counted)`);
          });
          const validity = samples.judge('amdsmi', gpus.map((g) => g.domain), t1);
          const reading: EnergyReading = { joules: sum, source: gpusSource(gpus, 'amdsmi'), by_domain, window_ms, below_floor: window_ms < floor(), validity };
          if (warnings.length > 0) reading.warnings = warnings;
          return reading;
        },
      };
    },
    describe() {
      const out: Record<string, unknown> = { meter: 'amdsmi', library, floor_ms: floor(), poll_ms, wrap_max_watts: max_watts };
      if (opts.rocr_visible_devices !== undefined) out.rocr_visible_devices = opts.rocr_visible_devices;
      if (opts.hip_visible_devices !== undefined) out.hip_visible_devices = opts.hip_visible_devices;
      if (ignored.length > 0) out.visible_devices_ignored = ignored;
      out.domains = gpus.map((g) => ({
        domain: g.domain,
        amdsmi_index: g.index,
        uuid: g.uuid,
        source: modeSource(g.mode, 'amdsmi'),
        resolution_uj: g.resolution_uj,
      }));
      return out;
    },
    async close() {
      poller.stop();
      shutdownQuietly(binding, probed?.available === true);
      binding = null;
      probed = null;
    },
  };
}
