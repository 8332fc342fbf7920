import { round } from '../core/stats.js';
import type { WindowValidity } from '../core/energy.js';

/** A window is valid when at least this % of it lies between its first and last good sample. */
export const MIN_COVERAGE_PCT = 95;
/** ... and no two good samples (nor a counter's last change) are further apart than this many sampling intervals. */
export const MAX_GAP_INTERVALS = 4;

/**
 * What a meter saw of one window's samples, fed as it polls. `gap_limit_ms` is null for a counter read only
 * at the window's edges that cannot wrap (NVML's energy counter): two good reads cover the window whatever its length.
 */
export class WindowSamples {
  samples = 0;
  failed_reads = 0;
  wraps = 0;
  /** Samples dropped at a wrap the meter could not count. */
  dropped = 0;
  /** The longest time a counter stayed at one value, ms. */
  stalled_ms = 0;
  private first: number | null = null;
  private last: number | null = null;
  private max_gap = 0;
  constructor(
    readonly t0_ms: number,
    readonly gap_limit_ms: number | null,
  ) {}
  /** A good sample at `t_ms` (every device read). */
  ok(t_ms: number): void {
    if (this.last !== null) this.max_gap = Math.max(this.max_gap, t_ms - this.last);
    else this.first = t_ms;
    this.last = t_ms;
    this.samples++;
  }
  /** A counter has not moved since `since_ms`. */
  stall(since_ms: number, t_ms: number): void {
    this.stalled_ms = Math.max(this.stalled_ms, t_ms - Math.max(since_ms, this.t0_ms));
  }
  /** The window's verdict at `t1_ms`. */
  judge(meter: string, devices: string[], t1_ms: number, extra: string[] = []): WindowValidity {
    const window_ms = t1_ms - this.t0_ms;
    const two = this.samples >= 2 && this.first !== null && this.last !== null;
    const coverage_pct = !two ? null : window_ms > 0 ? Math.min(100, ((this.last! - this.first!) * 100) / window_ms) : 100;
    const reasons = [...extra];
    if (!two) reasons.push(`${this.samples} good sample(s): a window needs two`);
    else if (coverage_pct! < MIN_COVERAGE_PCT) reasons.push(`samples cover ${round(coverage_pct!, 1)} % of the window (under ${MIN_COVERAGE_PCT} %)`);
    const limit = this.gap_limit_ms;
    if (two && limit !== null && this.max_gap > limit) reasons.push(`a ${round(this.max_gap, 1)} ms gap between samples (over ${round(limit, 1)} ms, ${MAX_GAP_INTERVALS} sampling intervals)`);
    if (limit !== null && this.stalled_ms > limit) reasons.push(`a counter did not move for ${round(this.stalled_ms, 1)} ms (over ${round(limit, 1)} ms): stalled`);
    if (this.failed_reads > 0) reasons.push(`${this.failed_reads} failed read(s)`);
    if (this.dropped > 0) reasons.push(`${this.dropped} sample(s) dropped at a wrap that could not be counted`);
    return {
      valid: reasons.length === 0,
      reasons,
      meter,
      devices,
      samples: this.samples,
      coverage_pct: coverage_pct === null ? null : round(coverage_pct, 1),
      max_gap_ms: two ? round(this.max_gap, 1) : null,
      wraps: this.wraps,
      failed_reads: this.failed_reads,
    };
  }
}

/** One verdict for a window several meters read together (a composite): every part must be valid. */
export function combineValidity(parts: readonly (WindowValidity | undefined)[], ids: readonly string[]): WindowValidity | undefined {
  if (parts.some((p) => p === undefined)) return undefined;
  const ps = parts as WindowValidity[];
  const known = <T>(f: (p: WindowValidity) => T | null): T[] => ps.map(f).filter((v): v is T => v !== null);
  const coverage = known((p) => p.coverage_pct);
  const gaps = known((p) => p.max_gap_ms);
  return {
    valid: ps.every((p) => p.valid),
    reasons: ps.flatMap((p, i) => p.reasons.map((r) => `${ids[i]}: ${r}`)),
    meter: ps.map((p) => p.meter).join('+'),
    devices: ps.flatMap((p) => p.devices),
    samples: Math.min(...ps.map((p) => p.samples)),
    coverage_pct: coverage.length === ps.length ? Math.min(...coverage) : null,
    max_gap_ms: gaps.length > 0 ? Math.max(...gaps) : null,
    wraps: ps.reduce((t, p) => t + p.wraps, 0),
    failed_reads: ps.reduce((t, p) => t + p.failed_reads, 0),
  };
}
