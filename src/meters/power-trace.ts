import { round } from '../core/stats.js';
import type { PowerTraceSummary, TracePhase } from '../core/energy.js';
import type { Meter, MeterWindow } from './meter.js';

/** One interval of the trace: the watts each domain drew over it (its joules ÷ its length). */
interface TraceRow {
  t_utc: string;
  phase: TracePhase;
  dt_ms: number;
  watts: Record<string, number | null>;
}

/** Default interval between rows, ms. */
const POWER_TRACE_INTERVAL_MS = 100;

/**
 * A power time series over a run: back-to-back meter windows, each one row, a new one at every phase change
 * so no row straddles two phases. Summing watts × dt over rows gives the energy the meter read in between.
 */
export class PowerTrace {
  readonly rows: TraceRow[] = [];
  private window: MeterWindow | null = null;
  private current: TracePhase = 'idle';
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly meter: Meter,
    readonly interval_ms = POWER_TRACE_INTERVAL_MS,
    private readonly utc: () => Date = () => new Date(),
  ) {}

  /** Starts the trace in `phase`. */
  async begin(phase: TracePhase): Promise<void> {
    this.current = phase;
    this.window = await this.meter.start();
    // A failed read leaves the chain rejected: the next phase() or end() throws it, never an unhandled rejection here.
    this.timer = setInterval(() => this.phase(this.current).catch(() => undefined), this.interval_ms);
    this.timer.unref();
  }

  /** Ends the last row; the trace takes no more. */
  async end(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.phase(null);
  }

  /** Ends the current row and starts the next in phase `next` (`null`: none, the trace ends). */
  phase(next: TracePhase | null): Promise<void> {
    this.chain = this.chain.then(async () => {
      const old = this.window;
      if (old === null) return;
      const phase = this.current;
      // The next window opens before the old closes: no energy falls between rows.
      this.window = next === null ? null : await this.meter.start();
      if (next !== null) this.current = next;
      const r = await old.stop();
      const s = r.window_ms / 1000;
      const watts: Record<string, number | null> = {};
      for (const [d, v] of Object.entries(r.by_domain)) watts[d] = v.joules === null || !(s > 0) ? null : v.joules / s;
      this.rows.push({ t_utc: this.utc().toISOString(), phase, dt_ms: r.window_ms, watts });
    });
    return this.chain;
  }

  /** Renames the rows of one phase (a window the run opened and then discarded). */
  relabel(from: TracePhase, to: TracePhase): void {
    for (const r of this.rows) if (r.phase === from) r.phase = to;
  }

  /** Every domain seen, in first-seen order. */
  domains(): string[] {
    const out = new Set<string>();
    for (const r of this.rows) for (const d of Object.keys(r.watts)) out.add(d);
    return [...out];
  }

  /** CSV: `t_utc,phase,<domain>_w…` (each row's end time; empty where a domain did not read). */
  csv(): string {
    const domains = this.domains();
    const lines = [['t_utc', 'phase', ...domains.map((d) => `${d}_w`)].join(',')];
    for (const r of this.rows) lines.push([r.t_utc, r.phase, ...domains.map((d) => fmt(r.watts[d]))].join(','));
    return `${lines.join('\n')}\n`;
  }

  /** At most `max_rows` rows: runs of one phase merged in equal groups, each group's watts energy-weighted. */
  summary(max_rows = 200): PowerTraceSummary {
    const domains = this.domains();
    const per = Math.max(1, Math.ceil(this.rows.length / max_rows));
    const rows: PowerTraceSummary['rows'] = [];
    let group: TraceRow[] = [];
    const flush = (): void => {
      if (group.length === 0) return;
      const dt = group.reduce((t, r) => t + r.dt_ms, 0);
      const w = domains.map((d) => {
        if (group.some((r) => r.watts[d] === null || r.watts[d] === undefined)) return null;
        return dt > 0 ? round(group.reduce((t, r) => t + r.watts[d]! * r.dt_ms, 0) / dt, 3) : null;
      });
      rows.push([group.at(-1)!.t_utc, group[0]!.phase, round(dt, 3), ...w]);
      group = [];
    };
    for (const r of this.rows) {
      if (group.length === per || (group.length > 0 && group[0]!.phase !== r.phase)) flush();
      group.push(r);
    }
    flush();
    return { interval_ms: this.interval_ms, domains, rows };
  }
}

function fmt(v: number | null | undefined): string {
  return v === null || v === undefined ? '' : String(round(v, 3));
}
