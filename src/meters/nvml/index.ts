import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { firstLine, type EnergyReading, type Meter, type MeterProbe, type MeterWindow } from '../meter.js';
import { gpusSource, modeSource, shutdownQuietly, type GpuMode } from '../gpu.js';
import { Poller } from '../poller.js';
import { MAX_GAP_INTERVALS, WindowSamples } from '../validity.js';
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

interface Gpu {
  domain: string;
  index: number;
  uuid: string;
  name: string;
  device: NvmlDevice;
  /** `counter`: total energy in mJ; `power`: sampled draw integrated over time. */
  mode: GpuMode;
  /** Integrated energy since setup, mJ (power mode only). */
  integrated_mj: number;
  last_mw: number | null;
  last_ms: number | null;
}

/** The NVML meter: per GPU, the total-energy counter at the window edges (`nvml`), or power integrated (`integrated-power`). */
export function createNvmlMeter(opts: NvmlOptions = {}): Meter {
  const poll_ms = opts.poll_ms ?? NVML_DEFAULT_POLL_MS;
  const now = opts.now ?? (() => performance.now());
  let binding: NvmlBinding | null = null;
  let gpus: Gpu[] = [];
  let ignored: string[] = [];
  let probed: MeterProbe | null = null;
  const poller = new Poller(samplePower, poll_ms);
  /** The open windows' sample records (power mode: every poll; counter mode: the two edge reads). */
  const open = new Set<WindowSamples>();

  const setUp = async (): Promise<MeterProbe> => (probed ??= await inspect());

  async function inspect(): Promise<MeterProbe> {
    try {
      if (typeof opts.binding === 'object') binding = opts.binding;
      else if (typeof opts.binding === 'function') binding = await opts.binding();
      else {
        // Cheap check first, so machines without an NVIDIA driver never load the FFI module.
        if (!existsSync('/proc/driver/nvidia/version') && !existsSync('/dev/nvidiactl')) {
          return {
            available: false,
            reason: 'no NVIDIA driver on this machine (/proc/driver/nvidia/version and /dev/nvidiactl are absent)',
            fix: 'install the NVIDIA driver, or pass the GPUs into the container (docker --gpus all)',
          };
        }
        binding = await loadNvmlBinding();
      }
    } catch (e) {
      return { available: false, reason: `cannot load ${NVML_LIBRARY}: ${firstLine(e)}`, fix: 'install the NVIDIA driver (it ships NVML), or expose it to the container' };
    }
    try {
      binding.init();
      const count = binding.deviceCount();
      const handles = Array.from({ length: count }, (_, i) => binding!.handleByIndex(i));
      const uuids = handles.map((h) => binding!.uuid(h));
      const vis = visibleDevices(opts.cuda_visible_devices, uuids);
      ignored = vis.ignored;
      gpus = [];
      for (const index of vis.indices) {
        const device = handles[index];
        const gpu: Gpu = {
          domain: `gpu-${index}`,
          index,
          uuid: uuids[index]!,
          name: binding.name(device),
          device,
          mode: 'counter',
          integrated_mj: 0,
          last_mw: null,
          last_ms: null,
        };
        try {
          binding.totalEnergy_mj(device);
        } catch (e) {
          if (!(e instanceof NvmlError && e.nvml_code === NVML_ERROR_NOT_SUPPORTED)) throw e;
          binding.power_mw(device); // throws when power is unsupported too
          gpu.mode = 'power';
        }
        gpus.push(gpu);
      }
    } catch (e) {
      return { available: false, reason: `NVML: ${firstLine(e)}`, fix: 'check the driver with nvidia-smi; NVML needs a loaded NVIDIA kernel module' };
    }
    if (gpus.length === 0) {
      return {
        available: false,
        reason: `no GPU visible${opts.cuda_visible_devices !== undefined ? ` (CUDA_VISIBLE_DEVICES=${JSON.stringify(opts.cuda_visible_devices)})` : ''}`,
        fix: 'unset CUDA_VISIBLE_DEVICES or list GPU indices or UUIDs in it',
      };
    }
    const list = gpus.map((g) => `${g.domain} ${g.name}${g.mode === 'power' ? ' (integrated power)' : ''}`).join(', ');
    return { available: true, detail: list };
  }

  /** Adds the energy since the previous power sample (trapezoid rule) for power-mode GPUs. */
  function samplePower(t = now()): void {
    let good = true;
    for (const g of gpus) {
      if (g.mode !== 'power' || !binding) continue;
      let mw: number;
      try {
        mw = binding.power_mw(g.device);
      } catch {
        good = false;
        for (const w of open) w.failed_reads++;
        continue; // the next sample spans the gap
      }
      if (g.last_mw !== null && g.last_ms !== null) g.integrated_mj += (((g.last_mw + mw) / 2) * (t - g.last_ms)) / 1000;
      g.last_mw = mw;
      g.last_ms = t;
    }
    if (good && sampled()) for (const w of open) w.ok(t);
  }

  /** Power-mode GPUs are sampled on the poller; a counter alone is read at the window's edges. */
  function sampled(): boolean {
    return gpus.some((g) => g.mode === 'power');
  }

  function energies(): Map<string, number> {
    const out = new Map<string, number>();
    for (const g of gpus) out.set(g.domain, g.mode === 'counter' ? binding!.totalEnergy_mj(g.device) : g.integrated_mj);
    return out;
  }

  return {
    id: 'nvml',
    source: 'nvml',
    floor_ms: NVML_FLOOR_MS,
    probe: () => setUp(),
    async start(): Promise<MeterWindow> {
      const p = await setUp();
      if (!p.available) throw new Error(`nvml meter cannot read: ${p.reason}`);
      const t0 = now();
      // A counter that cannot wrap needs no polling: its two edge reads cover the window whatever its length.
      const samples = new WindowSamples(t0, sampled() ? MAX_GAP_INTERVALS * poll_ms : null);
      open.add(samples);
      poller.acquire(sampled());
      samplePower(t0);
      const before = energies();
      if (!sampled()) samples.ok(t0);
      return {
        async stop(): Promise<EnergyReading> {
          const t1 = now();
          samplePower(t1);
          const after = energies();
          const window_ms = t1 - t0;
          if (!sampled()) samples.ok(t1);
          open.delete(samples);
          poller.release();
          const by_domain: EnergyReading['by_domain'] = {};
          let sum = 0;
          for (const g of gpus) {
            const j = ((after.get(g.domain) ?? 0) - (before.get(g.domain) ?? 0)) / 1000;
            by_domain[g.domain] = { joules: j, source: modeSource(g.mode, 'nvml') };
            sum += j;
          }
          const validity = samples.judge('nvml', gpus.map((g) => g.domain), t1);
          return { joules: sum, source: gpusSource(gpus, 'nvml'), by_domain, window_ms, below_floor: window_ms < NVML_FLOOR_MS, validity };
        },
      };
    },
    describe() {
      const out: Record<string, unknown> = { meter: 'nvml', library: NVML_LIBRARY, floor_ms: NVML_FLOOR_MS, power_poll_ms: poll_ms };
      if (opts.cuda_visible_devices !== undefined) out.cuda_visible_devices = opts.cuda_visible_devices;
      if (ignored.length > 0) out.cuda_visible_devices_ignored = ignored;
      out.domains = gpus.map((g) => ({
        domain: g.domain,
        nvml_index: g.index,
        uuid: g.uuid,
        name: g.name,
        source: modeSource(g.mode, 'nvml'),
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
