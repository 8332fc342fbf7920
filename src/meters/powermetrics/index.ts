import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { firstLine, type EnergyReading, type Meter, type MeterProbe, type MeterWindow } from '../meter.js';
import { integrateSamples, type TimedSample } from './integrate.js';
import { parsePowerSample, PowermetricsParseError } from './parse.js';

/** Default sample interval, ms: the meter's floor, and the longest a window's end waits for its sample. */
const POWERMETRICS_DEFAULT_INTERVAL_MS = 100;
/** A window whose samples cover less than this share of it (samples missing or refused) reads null. */
const MIN_COVERAGE = 0.9;

export interface PowermetricsOptions {
  /** The executable (default `powermetrics` on PATH); given, the macOS check is skipped (tests). */
  command?: string;
  /** `-i`: sample interval, ms; also the floor. */
  interval_ms?: number;
  /** Where to wait for the first sample before calling powermetrics unusable, ms (default 5 s or 3 intervals). */
  start_timeout_ms?: number;
  platform?: NodeJS.Platform;
  now?: () => number;
}

/**
 * The powermetrics meter (macOS, needs root): runs `powermetrics --samplers cpu_power,gpu_power -f plist`
 * while open and integrates each sample's average power over the part inside a window; floor: the interval.
 */
export function createPowermetricsMeter(opts: PowermetricsOptions = {}): Meter {
  const interval_ms = opts.interval_ms ?? POWERMETRICS_DEFAULT_INTERVAL_MS;
  const command = opts.command ?? 'powermetrics';
  const platform = opts.platform ?? process.platform;
  const now = opts.now ?? (() => performance.now());
  const args = ['--samplers', 'cpu_power,gpu_power', '-i', String(Math.round(interval_ms)), '-f', 'plist'];
  let child: ChildProcess | null = null;
  let probed: Promise<MeterProbe> | null = null;
  let samples: TimedSample[] = [];
  let domains = new Set<string>();
  /** Why samples stopped or were refused, for the windows they touch. */
  const faults: { at_ms: number; why: string }[] = [];
  let exited: string | null = null;
  let lastFault = -Infinity;
  /** Start times of the open windows (a list: two windows may start at the same instant). */
  const openStarts: number[] = [];
  let waiters: (() => void)[] = [];
  /** Bumped by close(): events of a process from before it are ignored. */
  let generation = 0;

  const wake = (): void => {
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };

  function onChunk(xml: string, parse: (x: string) => unknown): void {
    const t = now();
    if (xml.trim() === '') return;
    try {
      const s = parsePowerSample(xml, parse);
      const prev = samples[samples.length - 1];
      // Samples are contiguous but arrive with jitter: each spans from the previous arrival to its own, its power
      // scaled so the energy stays power × its own elapsed time; after a refused sample the gap stays a gap.
      const contiguous = prev !== undefined && lastFault <= prev.end_ms;
      const start = contiguous ? prev.end_ms : Math.max(prev?.end_ms ?? -Infinity, t - s.elapsed_ms);
      const span = t - start;
      if (span > 0) {
        const scale = s.elapsed_ms / span;
        const watts = Object.fromEntries(Object.entries(s.watts).map(([d, w]) => [d, w * scale]));
        samples.push({ end_ms: t, elapsed_ms: span, watts });
      } else if (prev !== undefined && prev.elapsed_ms > 0) {
        // Arrived in the same read as the previous sample: its energy joins that one's span.
        for (const [d, w] of Object.entries(s.watts)) prev.watts[d] = (prev.watts[d] ?? 0) + (w * s.elapsed_ms) / prev.elapsed_ms;
      }
      for (const d of Object.keys(s.watts)) domains.add(d);
    } catch (e) {
      lastFault = t;
      faults.push({ at_ms: t, why: e instanceof PowermetricsParseError ? `a sample was refused: ${e.message}` : String(e) });
    }
    prune();
    wake();
  }

  function prune(): void {
    const keepFrom = openStarts.length > 0 ? Math.min(...openStarts) : now();
    // Keep the samples that reach into any open window, and always the latest two.
    let i = 0;
    while (i < samples.length - 2 && samples[i]!.end_ms < keepFrom) i++;
    if (i > 0) samples = samples.slice(i);
    while (faults.length > 0 && faults[0]!.at_ms < keepFrom - 10 * interval_ms) faults.shift();
  }

  async function inspect(): Promise<MeterProbe> {
    if (platform !== 'darwin' && opts.command === undefined) {
      return { available: false, reason: `powermetrics is macOS-only (this is ${platform})`, fix: 'use rapl, nvml or amdsmi on Linux' };
    }
    const { parse } = await import('plist');
    return new Promise<MeterProbe>((resolve) => {
      let settled = false;
      let stderr = '';
      let pending = '';
      const done = (p: MeterProbe): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        if (!p.available) stop();
        resolve(p);
      };
      const timeout_ms = opts.start_timeout_ms ?? Math.max(5000, 3 * interval_ms);
      const timeout = setTimeout(() => done({ available: false, reason: `powermetrics wrote no sample within ${timeout_ms} ms`, fix: 'run `sudo powermetrics --samplers cpu_power -i 1000 -n 1` to check it' }), timeout_ms);
      let c: ChildProcess;
      try {
        c = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        done({ available: false, reason: `cannot start ${command}: ${firstLine(e)}` });
        return;
      }
      child = c;
      const gen = generation;
      const current = (): boolean => gen === generation;
      c.stdout!.setEncoding('utf8');
      c.stderr!.setEncoding('utf8');
      c.stderr!.on('data', (d: string) => {
        if (stderr.length < 4096) stderr += d;
      });
      c.stdout!.on('data', (d: string) => {
        if (!current()) return;
        pending += d;
        let k: number;
        while ((k = pending.indexOf('\0')) >= 0) {
          onChunk(pending.slice(0, k), parse);
          pending = pending.slice(k + 1);
        }
        if (!settled) {
          if (samples.length > 0) done({ available: true, detail: `sampled power every ${interval_ms} ms (${[...domains].join(', ')})` });
          else if (faults.length > 0) done({ available: false, reason: `powermetrics output not understood: ${faults[0]!.why}` });
        }
      });
      c.on('error', (e: NodeJS.ErrnoException) => {
        if (!current()) return;
        exited = `powermetrics could not run (${e.code ?? e.message})`;
        done({
          available: false,
          reason: e.code === 'ENOENT' ? `${command} not found on PATH` : `cannot start ${command}: ${e.message}`,
          fix: 'powermetrics ships with macOS in /usr/bin',
        });
        wake();
      });
      c.on('exit', (code, signal) => {
        if (!current()) return;
        const said = firstLine(stderr.trim());
        exited = `powermetrics exited (${signal ?? `code ${code}`})${said ? `: ${said}` : ''}`;
        if (/superuser|root|permission|not permitted/i.test(stderr)) {
          done({ available: false, reason: `powermetrics needs root: ${said}`, fix: 'run joulebench with sudo (powermetrics reads the power counters only as root)' });
        } else done({ available: false, reason: exited });
        wake();
      });
    });
  }

  function stop(): void {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    child = null;
  }

  /** Waits until a sample ends at or after `t`, the process ends, or `ms` pass. */
  async function sampleAfter(t: number, ms: number): Promise<void> {
    const deadline = now() + ms;
    while ((samples[samples.length - 1]?.end_ms ?? -Infinity) < t && exited === null && now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - now()));
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  return {
    id: 'powermetrics',
    source: 'powermetrics',
    floor_ms: interval_ms,
    probe: () => (probed ??= inspect()),
    async start(): Promise<MeterWindow> {
      const p = await (probed ??= inspect());
      if (!p.available) throw new Error(`powermetrics meter cannot read: ${p.reason}`);
      const t0 = now();
      openStarts.push(t0);
      return {
        async stop(): Promise<EnergyReading> {
          const t1 = now();
          await sampleAfter(t1, 3 * interval_ms + 1000);
          openStarts.splice(openStarts.indexOf(t0), 1);
          const window_ms = t1 - t0;
          // Samples are in time order: skip, by bisection, those that end before the window starts.
          let lo = 0;
          let hi = samples.length;
          while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (samples[mid]!.end_ms < t0) lo = mid + 1;
            else hi = mid;
          }
          const { by_domain_j, covered_ms } = integrateSamples(samples.slice(lo), t0, t1);
          const warnings = faults.filter((f) => f.at_ms >= t0 && f.at_ms <= t1 + interval_ms).map((f) => f.why);
          const covered = window_ms <= 0 ? 1 : covered_ms / window_ms;
          const by_domain: EnergyReading['by_domain'] = {};
          let joules: number | null = null;
          if (covered >= MIN_COVERAGE) {
            joules = 0;
            for (const d of domains) {
              const j = by_domain_j[d] ?? 0;
              by_domain[d] = { joules: j, source: 'powermetrics' };
              joules += j;
            }
          } else {
            for (const d of domains) by_domain[d] = { joules: null, source: 'powermetrics' };
            warnings.push(`samples cover ${Math.round(covered * 100)}% of the window${exited ? ` (${exited})` : ''}: its energy is unknown`);
          }
          prune();
          const r: EnergyReading = { joules, source: 'powermetrics', by_domain, window_ms, below_floor: window_ms < interval_ms };
          if (warnings.length > 0) r.warnings = warnings;
          return r;
        },
      };
    },
    describe: () => ({
      meter: 'powermetrics',
      command: [command, ...args].join(' '),
      measures: 'sampled average power per sample (not a counter), integrated over the window',
      floor_ms: interval_ms,
      domains: [...domains],
    }),
    async close() {
      generation++;
      stop();
      wake();
      probed = null;
      samples = [];
      domains = new Set();
      exited = null;
      lastFault = -Infinity;
    },
  };
}
