import type { CaseResult, ResultsHeader } from '../core/types.js';
import { buildLoadBlock, type LoadBlock } from './block.js';
import { loadRecordOf, type LoadMeta } from './record.js';
import type { LoadOptions } from './options.js';
import type { WindowReading } from './steady.js';

/** A results header written by a load run: it carries the load settings (rate `"inf"` as a string). */
type LoadHeader = ResultsHeader & { load?: Omit<LoadOptions, 'request_rate'> & { request_rate: number | 'inf' } };

/**
 * The `load` block of a load run, rebuilt from its results file: the per-request `meta.load` lines
 * and the `load_energy` record. `null` for a file that is not a load run. Pure.
 */
export function loadBlockFromResults(header: ResultsHeader, results: readonly CaseResult[], other: readonly Record<string, unknown>[]): LoadBlock | null {
  const h = header as LoadHeader;
  if (!h.load) return null;
  const opts: LoadOptions = { ...h.load, request_rate: h.load.request_rate === 'inf' ? Infinity : h.load.request_rate };
  const rows = results
    .filter((r) => r.phase === 'scored' && r.meta?.load)
    .map((r) => ({ r, m: r.meta!.load as LoadMeta }))
    .sort((a, b) => a.m.request - b.m.request);
  const records = rows.map(({ r, m }) => loadRecordOf(r, m, opts.ttft_token));
  const firsts = rows
    .map(({ m }) => (opts.ttft_token === 'any' ? m.first_token_ms : m.first_content_ms) ?? null)
    .map((t, i) => (t === null ? null : rows[i]!.m.sent_at_ms + t))
    .filter((t): t is number => t !== null);
  const energy = other.find((o) => o.record === 'load_energy') as
    | { run: WindowReading | null; run_end_ms: number; steady: (WindowReading & { start_ms: number; end_ms: number }) | null; idle: { status: 'measured' | 'marginal' | 'skipped' | 'unusable'; watts: number | null } }
    | undefined;
  return buildLoadBlock(opts, records, {
    first_token_at_ms: firsts,
    steady: energy?.steady ?? null,
    measured_window: energy?.steady ? { start_ms: energy.steady.start_ms, end_ms: energy.steady.end_ms } : null,
    run: energy?.run ?? null,
    run_end_ms: energy?.run_end_ms ?? records.reduce((m, r) => Math.max(m, r.sent_at_ms + r.e2e_ms), 0),
    idle: energy?.idle ?? { status: 'skipped', watts: null },
    floor_ms: 0,
  });
}
