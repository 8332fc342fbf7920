import { join } from 'node:path';
import { Poller } from '../poller.js';
import { MAX_GAP_INTERVALS, WindowSamples } from '../validity.js';
import { counterDelta, parseCounter, parseMicrojoules } from './counter.js';
import type { RaplDomain, ReadText } from './zones.js';

/** Accumulated energy per domain since the sampler started, and the samples it had to drop. */
interface RaplSnapshot {
  total_uj: Record<string, number>;
  dropped: Record<string, number>;
  read_errors: Record<string, number>;
}

interface DomainState {
  domain: string;
  energy_path: string;
  max_uj: number | null;
  last_uj: number | null;
  /** When the counter last moved, ms. */
  changed_ms: number;
  total_uj: number;
  dropped: number;
  read_errors: number;
}

/** Reads every counter on a background timer while any window is open, so every wrap is seen; windows may overlap. */
export class RaplSampler {
  private readonly states: DomainState[];
  private readonly poller: Poller;
  /** Lines for a person: each distinct problem once. */
  readonly warnings = new Set<string>();
  /** The open windows' sample records. */
  private readonly open = new Set<WindowSamples>();

  constructor(
    domains: readonly RaplDomain[],
    private readonly read: ReadText,
    readonly poll_ms: number,
    private readonly now: () => number,
  ) {
    this.states = domains.map((d) => ({
      domain: d.domain,
      energy_path: join(d.zone.dir, 'energy_uj'),
      max_uj: this.readMax(d),
      last_uj: null,
      changed_ms: 0,
      total_uj: 0,
      dropped: 0,
      read_errors: 0,
    }));
    this.poller = new Poller(() => this.sample(), poll_ms);
  }

  /** The max range per domain (null where unreadable), for the receipt. */
  maxRanges(): Record<string, number | null> {
    return this.byDomain('max_uj');
  }

  /** Opens a window: polls now and keeps polling until the last window closes. */
  acquire(): { snap: RaplSnapshot; samples: WindowSamples } {
    const t = this.now();
    const samples = new WindowSamples(t, MAX_GAP_INTERVALS * this.poll_ms);
    this.open.add(samples);
    this.poller.acquire();
    this.sample(t);
    return { snap: this.snapshot(), samples };
  }

  /** Closes a window: polls once more so the window ends at the latest counter value; `t1_ms` is that poll's time. */
  release(samples: WindowSamples): { snap: RaplSnapshot; t1_ms: number } {
    const t1_ms = this.now();
    this.sample(t1_ms);
    this.open.delete(samples);
    const snap = this.snapshot();
    this.poller.release();
    return { snap, t1_ms };
  }

  /** Reads every counter once and adds the deltas since the previous read. */
  sample(t = this.now()): void {
    let good = true;
    for (const s of this.states) {
      let cur: number;
      try {
        cur = parseCounter(this.read(s.energy_path), s.energy_path, s.max_uj);
      } catch (e) {
        // Keep the previous value: the next good read covers the gap unless a wrap hid in it.
        s.read_errors++;
        good = false;
        for (const w of this.open) w.failed_reads++;
        this.warnings.add(`${s.domain}: could not read ${s.energy_path} (${errText(e)}); sample skipped`);
        continue;
      }
      if (s.last_uj !== null) {
        const d = counterDelta(s.last_uj, cur, s.max_uj);
        if ('delta_uj' in d) {
          s.total_uj += d.delta_uj;
          if (cur < s.last_uj) for (const w of this.open) w.wraps++;
        } else {
          s.dropped++;
          for (const w of this.open) w.dropped++;
          this.warnings.add(`${s.domain}: ${d.dropped} (energy since the previous poll is missing)`);
        }
        if (cur === s.last_uj) for (const w of this.open) w.stall(s.changed_ms, t);
        else s.changed_ms = t;
      } else s.changed_ms = t;
      s.last_uj = cur;
    }
    if (good) for (const w of this.open) w.ok(t);
  }

  snapshot(): RaplSnapshot {
    return { total_uj: this.byDomain('total_uj'), dropped: this.byDomain('dropped'), read_errors: this.byDomain('read_errors') };
  }

  /** One field of every domain's state, by domain. */
  private byDomain<K extends keyof DomainState>(key: K): Record<string, DomainState[K]> {
    return Object.fromEntries(this.states.map((s) => [s.domain, s[key]]));
  }

  /** Stops the timer whatever windows are open (meter close). */
  stopTimer(): void {
    this.poller.stop();
  }

  private readMax(d: RaplDomain): number | null {
    const path = join(d.zone.dir, 'max_energy_range_uj');
    try {
      return parseMicrojoules(this.read(path), path);
    } catch (e) {
      this.warnings.add(`${d.domain}: cannot read ${path} (${errText(e)}); a wrap in this counter drops its sample`);
      return null;
    }
  }
}

/** `EACCES`-style code when there is one, else the message. */
export function errText(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown };
  return typeof err?.code === 'string' ? err.code : String(err?.message ?? e);
}
