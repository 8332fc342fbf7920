import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { EnergyReading, Meter, MeterProbe, MeterWindow } from '../meter.js';
import { parseCounter } from './counter.js';
import { errText, RaplSampler } from './sampler.js';
import { listZones, selectDomains, type RaplSelection, type ReadText } from './zones.js';

/** The default powercap root; containers often bind-mount it elsewhere. */
export const DEFAULT_POWERCAP_ROOT = '/sys/class/powercap';
/** RAPL counters update about every millisecond; a shorter window reads noise. */
const RAPL_FLOOR_MS = 1;
/** Background poll interval, ms: far shorter than the fastest wrap (about a minute under heavy load). */
const RAPL_DEFAULT_POLL_MS = 500;

export interface RaplOptions {
  /** Default `/sys/class/powercap` (`--powercap-root`, `JOULEBENCH_POWERCAP_ROOT`). */
  root?: string;
  /** Add the DRAM zones (`--rapl-dram`). */
  dram?: boolean;
  poll_ms?: number;
  /** Injected in tests to simulate read errors honestly; default `fs.readFileSync(path, 'utf8')`. */
  read?: ReadText;
  now?: () => number;
}

function zoneNames(selection: RaplSelection): string {
  const skipped = selection.skipped.map((line) => /^\S+ \([^)]*\)/.exec(line)?.[0] ?? line);
  return [...selection.domains.map((d) => `${d.zone.entry} (${d.zone.name})`), ...skipped].join(', ');
}

const readUtf8: ReadText = (path) => readFileSync(path, 'utf8');

/** The Linux powercap (RAPL) meter: sums the package (or psys) counters, each domain labelled `rapl`. */
export function createRaplMeter(opts: RaplOptions = {}): Meter {
  const root = opts.root ?? DEFAULT_POWERCAP_ROOT;
  const read = opts.read ?? readUtf8;
  const poll_ms = opts.poll_ms ?? RAPL_DEFAULT_POLL_MS;
  const now = opts.now ?? (() => performance.now());
  let state: { selection: RaplSelection; sampler: RaplSampler } | null = null;
  let probed: MeterProbe | null = null;

  const setUp = (): MeterProbe => (probed ??= inspect());

  function inspect(): MeterProbe {
    if (!existsSync(root)) {
      return {
        available: false,
        reason: `no powercap tree at ${root} (not Linux, no RAPL on this CPU or VM, or a container that does not mount it)`,
        fix: 'point --powercap-root (or JOULEBENCH_POWERCAP_ROOT) at the mounted powercap folder',
      };
    }
    let selection: RaplSelection;
    try {
      selection = selectDomains(listZones(root, read), { dram: opts.dram ?? false });
    } catch (e) {
      return { available: false, reason: `cannot list ${root} (${errText(e)})` };
    }
    if (selection.domains.length === 0) {
      return { available: false, reason: `no package or psys zone under ${root}`, fix: 'check that the intel_rapl (or AMD RAPL) driver is loaded' };
    }
    if (opts.dram && selection.mode === 'package' && !selection.domains.some((d) => d.zone.name === 'dram')) {
      // Asked for DRAM and there is none: say so, rather than report package energy as if it included it.
      return {
        available: false,
        reason: `--rapl-dram: no dram zone under ${root} (this CPU or kernel exposes none; zones: ${zoneNames(selection)})`,
        fix: 'run without --rapl-dram to measure the package zones alone',
      };
    }
    const sampler = new RaplSampler(selection.domains, read, poll_ms, now);
    const max_uj = sampler.maxRanges();
    for (const d of selection.domains) {
      const path = join(d.zone.dir, 'energy_uj');
      let text: string;
      try {
        text = read(path);
      } catch (e) {
        const code = errText(e);
        if (code === 'EACCES' || code === 'EPERM') {
          return {
            available: false,
            reason: `${path} is readable by root only (${code}; kernels since 2020 restrict it, CVE-2020-8694)`,
            fix: `run as root, or grant read access: sudo chmod o+r ${root}/*/energy_uj (until reboot), or a udev rule doing the same; never falling back to an estimate silently`,
          };
        }
        return { available: false, reason: `cannot read ${path} (${code})` };
      }
      // Readable is not enough: a counter that reads garbage would otherwise be summed as 0 J.
      try {
        parseCounter(text, path, max_uj[d.domain] ?? null);
      } catch (e) {
        const reason = `energy counter reads garbage: ${(e as Error).message}; refusing to report it as 0 J`;
        return { available: false, reason, fix: 'check the RAPL driver (intel_rapl_common / amd_energy) and the mounted powercap tree' };
      }
    }
    state = { selection, sampler };
    const names = selection.domains.map((d) => d.domain).join(' + ');
    return { available: true, detail: `${names} under ${root} (${selection.mode} mode)` };
  }

  return {
    id: 'rapl',
    source: 'rapl',
    floor_ms: RAPL_FLOOR_MS,
    probe: async () => setUp(),
    async start(): Promise<MeterWindow> {
      const p = setUp();
      if (!p.available || !state) throw new Error(`rapl meter cannot read: ${p.available ? 'not set up' : p.reason}`);
      const { sampler, selection } = state;
      const t0 = now();
      const { snap: before, samples } = sampler.acquire();
      return {
        async stop(): Promise<EnergyReading> {
          const { snap: after, t1_ms } = sampler.release(samples);
          const window_ms = now() - t0;
          const by_domain: EnergyReading['by_domain'] = {};
          let sum = 0;
          const warnings: string[] = [];
          let known = true;
          for (const [domain, total] of Object.entries(after.total_uj)) {
            const dropped = (after.dropped[domain] ?? 0) - (before.dropped[domain] ?? 0);
            if (dropped > 0) warnings.push(`${domain}: ${dropped} sample(s) dropped at a wrap (max_energy_range_uj unreadable); the figure is low`);
            const errs = (after.read_errors[domain] ?? 0) - (before.read_errors[domain] ?? 0);
            if (errs > 0) {
              // A failed or garbage read inside the window: its energy is unknown (null), never the good reads' deltas.
              warnings.push(`${domain}: ${errs} read(s) of energy_uj failed or were not a valid counter in this window; its energy is unknown (null)`);
              by_domain[domain] = { joules: null, source: 'rapl' };
              known = false;
              continue;
            }
            const j = (total - (before.total_uj[domain] ?? 0)) / 1e6;
            by_domain[domain] = { joules: j, source: 'rapl' };
            sum += j;
          }
          const devices = selection.domains.map((d) => d.domain);
          const reading: EnergyReading = { joules: known ? sum : null, source: 'rapl', by_domain, window_ms, below_floor: window_ms < RAPL_FLOOR_MS, validity: samples.judge('rapl', devices, t1_ms) };
          if (warnings.length > 0) reading.warnings = warnings;
          return reading;
        },
      };
    },
    describe() {
      const out: Record<string, unknown> = { meter: 'rapl', powercap_root: root, dram: opts.dram ?? false, poll_ms, floor_ms: RAPL_FLOOR_MS };
      if (state) {
        out.mode = state.selection.mode;
        out.domains = state.selection.domains.map((d) => ({ domain: d.domain, zone: d.zone.entry, name: d.zone.name }));
        out.skipped = state.selection.skipped;
        out.max_energy_range_uj = state.sampler.maxRanges();
        if (state.sampler.warnings.size > 0) out.warnings = [...state.sampler.warnings];
      }
      return out;
    },
    async close() {
      state?.sampler.stopTimer();
    },
  };
}
