import { performance } from 'node:perf_hooks';
import type { EnergySource } from '../core/types.js';
import { firstLine, type EnergyReading, type Meter, type MeterProbe, type MeterWindow } from './meter.js';
import { Poller } from './poller.js';
import { MAX_GAP_INTERVALS, WindowSamples } from './validity.js';

/** How a GPU's energy is read: the driver's energy counter, or its power reading sampled and integrated. */
export type GpuMode = 'counter' | 'power';

/** A domain's label: the library's own for a counter, `integrated-power` for sampled power. */
export function modeSource(mode: GpuMode, counter: EnergySource): EnergySource {
  return mode === 'counter' ? counter : 'integrated-power';
}

/** The label of a reading over several GPUs: `mixed` when both modes are in use. */
export function gpusSource(gpus: readonly { mode: GpuMode }[], counter: EnergySource): EnergySource {
  const modes = new Set(gpus.map((g) => g.mode));
  return modes.size > 1 ? 'mixed' : modeSource(modes.has('power') ? 'power' : 'counter', counter);
}

/** Shuts a native library down when it was set up; shutting down is best effort. */
export function shutdownQuietly(binding: { shutdown(): void } | null, wasUp: boolean): void {
  if (binding === null || !wasUp) return;
  try {
    binding.shutdown();
  } catch {
    // nothing to do: the process is letting go of the library either way
  }
}

/**
 * Applies one `*_VISIBLE_DEVICES` list to the devices `from` (unset: all; empty: none). Like the runtimes,
 * the list stops at the first entry `resolve` finds no device for; it and the rest are returned as ignored.
 */
export function pickVisible(
  value: string | undefined,
  from: readonly number[],
  resolve: (entry: string) => number | null | undefined,
): { indices: number[]; ignored: string[] } {
  if (value === undefined) return { indices: [...from], ignored: [] };
  const tokens = value.split(',').map((t) => t.trim());
  if (tokens.length === 1 && tokens[0] === '') return { indices: [], ignored: [] };
  const indices: number[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const index = resolve(tokens[k]!);
    if (index === null || index === undefined) return { indices, ignored: tokens.slice(k) };
    if (!indices.includes(index)) indices.push(index);
  }
  return { indices, ignored: [] };
}

/** One GPU as the shared frame follows it; each meter adds its device handle and reading state. */
export interface GpuState {
  domain: string;
  index: number;
  uuid: string;
  mode: GpuMode;
  /** Bumped whenever the running total can no longer be trusted (reset, unreadable counter). */
  epoch: number;
  /** Why the last epoch was bumped. */
  fault: string | null;
  /** Counter wraps seen (and counted) so far. */
  wraps: number;
}

/** A GPU's common state before its first read: `gpu-<index>`, counter mode. */
export function gpuState(index: number, uuid: string): GpuState {
  return { domain: `gpu-${index}`, index, uuid, mode: 'counter', epoch: 0, fault: null, wraps: 0 };
}

/** What a GPU meter plugs into the frame: its library, its messages, and how it reads one GPU. */
export interface GpuMeterSpec<B extends { init(): void; shutdown(): void }, G extends GpuState> {
  id: 'nvml' | 'amdsmi';
  library: string;
  /** The library's name in messages (`NVML: …`). */
  label: string;
  /** Injected, or a loader; undefined: `load` after the driver check. */
  binding: B | (() => Promise<B>) | undefined;
  /** Why there is no driver to load the library for, or null (a cheap check before the FFI module is loaded). */
  noDriver(): { reason: string; fix: string } | null;
  load(): Promise<B>;
  fix: { load: string; setUp: string; visible: string };
  /** The `*_VISIBLE_DEVICES` variables honoured, by name, as the environment has them. */
  visible: Record<string, string | undefined>;
  /** What `no … visible` names. */
  gpus: string;
  /** The describe() key of the visible-devices entries that were ignored. */
  ignored_key: string;
  poll_ms: number;
  now?: () => number;
  /** The visible GPUs; `gpu` sets one up and throws when it can be metered neither way. */
  devices(b: B): { indices: number[]; ignored: string[]; gpu(index: number): G };
  /** Read every GPU once at set-up, so the first window's first read is already a delta. */
  sample_at_set_up: boolean;
  detail(g: G): string;
  /** Brings one GPU's running total up to `t`; false: the read failed. */
  sample(b: B | null, g: G, t: number): boolean;
  /** A GPU's energy so far, in units of 1 J / `per_joule`. */
  energy(b: B | null, g: G): number;
  per_joule: number;
  /** Whether open windows are polled; if not, the counters are read at the window's edges alone. */
  polled(gpus: readonly G[]): boolean;
  floor_ms(gpus: readonly G[]): number;
  /** The receipt's settings, after `meter`, `library` and `floor_ms`. */
  settings: Record<string, unknown>;
  describeGpu(g: G): Record<string, unknown>;
}

/**
 * The frame the GPU meters share: loads and sets up the library once, picks the visible GPUs, samples them
 * while windows are open, turns each window into a reading with its validity, describes, and shuts down.
 */
export function createGpuMeter<B extends { init(): void; shutdown(): void }, G extends GpuState>(spec: GpuMeterSpec<B, G>): Meter {
  const { id, poll_ms } = spec;
  const now = spec.now ?? (() => performance.now());
  let binding: B | null = null;
  let gpus: G[] = [];
  let ignored: string[] = [];
  let probed: MeterProbe | null = null;
  const poller = new Poller(sampleAll, poll_ms);
  /** The open windows' sample records (polled: every poll; else the two edge reads). */
  const open = new Set<WindowSamples>();

  const setUp = async (): Promise<MeterProbe> => (probed ??= await inspect());

  async function inspect(): Promise<MeterProbe> {
    try {
      if (typeof spec.binding === 'function') binding = await spec.binding();
      else if (spec.binding !== undefined) binding = spec.binding;
      else {
        const missing = spec.noDriver();
        if (missing) return { available: false, ...missing };
        binding = await spec.load();
      }
    } catch (e) {
      return { available: false, reason: `cannot load ${spec.library}: ${firstLine(e)}`, fix: spec.fix.load };
    }
    try {
      binding.init();
      const found = spec.devices(binding);
      ignored = found.ignored;
      gpus = [];
      for (const index of found.indices) gpus.push(found.gpu(index));
    } catch (e) {
      return { available: false, reason: `${spec.label}: ${firstLine(e)}`, fix: spec.fix.setUp };
    }
    if (gpus.length === 0) {
      const vars = Object.entries(spec.visible).filter(([, v]) => v !== undefined).map(([name, v]) => `${name}=${JSON.stringify(v)}`);
      return { available: false, reason: `no ${spec.gpus} visible${vars.length > 0 ? ` (${vars.join(', ')})` : ''}`, fix: spec.fix.visible };
    }
    if (spec.sample_at_set_up) for (const g of gpus) spec.sample(binding, g, now());
    return { available: true, detail: gpus.map((g) => spec.detail(g)).join(', ') };
  }

  function sampleAll(t = now()): void {
    let failed = 0;
    for (const g of gpus) if (!spec.sample(binding, g, t)) failed++;
    for (const w of open) {
      if (failed === 0 && spec.polled(gpus)) w.ok(t);
      w.failed_reads += failed;
    }
  }

  const snapshot = () => gpus.map((g) => ({ energy: spec.energy(binding, g), epoch: g.epoch, wraps: g.wraps }));

  return {
    id,
    source: id,
    get floor_ms() {
      return spec.floor_ms(gpus);
    },
    probe: () => setUp(),
    async start(): Promise<MeterWindow> {
      const p = await setUp();
      if (!p.available) throw new Error(`${id} meter cannot read: ${p.reason}`);
      const t0 = now();
      // A counter that cannot wrap needs no polling: its two edge reads cover the window whatever its length.
      const samples = new WindowSamples(t0, spec.polled(gpus) ? MAX_GAP_INTERVALS * poll_ms : null);
      open.add(samples);
      poller.acquire(spec.polled(gpus));
      sampleAll(t0);
      const before = snapshot();
      if (!spec.polled(gpus)) samples.ok(t0);
      return {
        async stop(): Promise<EnergyReading> {
          const t1 = now();
          sampleAll(t1);
          const after = snapshot();
          const window_ms = t1 - t0;
          if (!spec.polled(gpus)) samples.ok(t1);
          open.delete(samples);
          poller.release();
          const by_domain: EnergyReading['by_domain'] = {};
          const warnings: string[] = [];
          let sum: number | null = 0;
          gpus.forEach((g, i) => {
            const b = before[i]!;
            const a = after[i]!;
            const label = modeSource(g.mode, id);
            if (a.epoch !== b.epoch) {
              by_domain[g.domain] = { joules: null, source: label };
              warnings.push(`${g.domain}: ${g.fault ?? 'the counter could not be followed'}; its energy over this window is unknown`);
              sum = null;
              return;
            }
            const j = (a.energy - b.energy) / spec.per_joule;
            by_domain[g.domain] = { joules: j, source: label };
            if (sum !== null) sum += j;
            const wraps = a.wraps - b.wraps;
            samples.wraps += wraps;
            if (wraps > 0) warnings.push(`${g.domain}: the 32-bit energy counter wrapped ${wraps} time(s) in this window (counted)`);
          });
          const validity = samples.judge(id, gpus.map((g) => g.domain), t1);
          const floor_ms = spec.floor_ms(gpus);
          const reading: EnergyReading = { joules: sum, source: gpusSource(gpus, id), by_domain, window_ms, below_floor: window_ms < floor_ms, validity };
          if (warnings.length > 0) reading.warnings = warnings;
          return reading;
        },
      };
    },
    describe() {
      const out: Record<string, unknown> = { meter: id, library: spec.library, floor_ms: spec.floor_ms(gpus), ...spec.settings };
      for (const [name, v] of Object.entries(spec.visible)) if (v !== undefined) out[name.toLowerCase()] = v;
      if (ignored.length > 0) out[spec.ignored_key] = ignored;
      out.domains = gpus.map((g) => spec.describeGpu(g));
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
