import type { ReportContext } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult, ResultsHeader } from '../core/types.js';
import { isFiniteNumber } from '../runner/case-check.js';
import { checkIdle, checkWindowReading, type Refuse } from '../runner/run-measures.js';
import { buildLoadBlock, type LoadBlock } from './block.js';
import { LoadColumns } from './columns.js';
import { loadRecordOf, type LoadMeta } from './record.js';
import type { LoadOptions } from './options.js';
import type { WindowReading } from './steady.js';

/** A results header written by a load run: it carries the load settings (rate `"inf"` as a string). */
type LoadHeader = ResultsHeader & { load?: Omit<LoadOptions, 'request_rate'> & { request_rate: number | 'inf' } };

type LoadEnergyLine = {
  run: WindowReading | null;
  run_end_ms: number;
  steady: (WindowReading & { start_ms: number; end_ms: number }) | null;
  idle: { status: 'measured' | 'marginal' | 'skipped' | 'unusable'; watts: number | null };
  pue?: number;
};

/** A load run's `load` block, rebuilt from its results file as the lines stream past (no line is kept). */
export class LoadBlockRebuild {
  private readonly columns = new LoadColumns();
  private readonly conversations = { count: 0, turns: 0 };

  private constructor(
    private readonly opts: LoadOptions,
    private readonly path: string,
  ) {}

  static forHeader(header: ResultsHeader, path: string): LoadBlockRebuild | null {
    const l = (header as LoadHeader).load;
    return l ? new LoadBlockRebuild({ ...l, request_rate: l.request_rate === 'inf' ? Infinity : l.request_rate }, path) : null;
  }

  /** A case line; a scored one without `meta.load` is refused, since the report would count a request the figures miss. */
  add(r: Pick<CaseResult, 'phase' | 'error' | 'passed' | 'completion_tokens' | 'prompt_tokens' | 'meta' | 'pass' | 'index'>): void {
    if (r.phase !== 'scored') return;
    const m = r.meta?.load;
    if (m === undefined) throw new JoulebenchError('E_RESULTS', `${this.path}: scored pass ${r.pass} case ${r.index} has no meta.load, which every request of a load run carries`);
    checkLoadMeta(m, this.path);
    if (m.turn !== undefined) {
      if (m.turn === 1) this.conversations.count++;
      this.conversations.turns++;
    }
    this.columns.add(loadRecordOf(r as CaseResult, m, this.opts.ttft_token), m.request);
  }

  /** The run's suite window, idle calibration and per-case energy kind, from the `load_energy` line (none without it). */
  reportContext(line: Record<string, unknown> | null): Pick<ReportContext, 'energy' | 'per_case_energy' | 'pue'> {
    if (line === null) return {};
    const energy = checkLoadEnergy(line, this.path);
    return { energy: { idle: energy.idle, suite: energy.run }, per_case_energy: energy.run !== null ? 'none' : 'target', ...(energy.pue !== undefined ? { pue: energy.pue } : {}) };
  }

  /** The block, given the file's `load_energy` line (if it has one). */
  block(line: Record<string, unknown> | null): LoadBlock {
    const energy = line === null ? undefined : checkLoadEnergy(line, this.path);
    const firsts: number[] = [];
    let end_ms = 0;
    for (const r of this.columns.records()) {
      if (r.ttft_ms !== null) firsts.push(r.sent_at_ms + r.ttft_ms);
      end_ms = Math.max(end_ms, r.sent_at_ms + r.e2e_ms);
    }
    return buildLoadBlock(this.opts, this.columns, {
      first_token_at_ms: firsts,
      steady: energy?.steady ?? null,
      measured_window: energy?.steady ? { start_ms: energy.steady.start_ms, end_ms: energy.steady.end_ms } : null,
      run: energy?.run ?? null,
      run_end_ms: energy?.run_end_ms ?? end_ms,
      idle: energy?.idle ?? { status: 'skipped', watts: null },
      floor_ms: 0,
      ...(this.opts.think_time_ms !== undefined ? { conversations: this.conversations } : {}),
    });
  }
}

/** The `load` block rebuilt from parsed results; `null` for a file that is not a load run. Pure. */
export function loadBlockFromResults(header: ResultsHeader, results: readonly CaseResult[], other: readonly Record<string, unknown>[], path = 'results'): LoadBlock | null {
  const rebuild = LoadBlockRebuild.forHeader(header, path);
  if (!rebuild) return null;
  for (const r of results) rebuild.add(r);
  return rebuild.block(other.find((o) => o.record === 'load_energy') ?? null);
}

const TIMES = ['planned_at_ms', 'sent_at_ms', 'queue_ms', 'lag_ms', 'e2e_ms'] as const;
const NULLABLE_TIMES = ['first_token_ms', 'first_content_ms'] as const;
const COUNTS = ['content_chunks', 'reasoning_chunks'] as const;

/** A request's `meta.load`, or an error naming file, request and key (a non-number would sum to a plausible wrong figure). */
function checkLoadMeta(m: unknown, path: string): asserts m is LoadMeta {
  const bad = (key: string, what: string): never => {
    const request = (m as { request?: unknown } | null)?.request;
    throw new JoulebenchError('E_RESULTS', `${path}: ${typeof request === 'number' ? `request ${request}` : 'a case line'}: meta.load${key === '' ? '' : `.${key}`} ${what}`);
  };
  if (typeof m !== 'object' || m === null || Array.isArray(m)) bad('', 'is not an object');
  const o = m as Record<string, unknown>;
  if (!Number.isSafeInteger(o.request) || (o.request as number) < 0) bad('request', 'is not a whole number ≥ 0');
  if (o.turn !== undefined && (!Number.isSafeInteger(o.turn) || (o.turn as number) < 1)) bad('turn', 'is not a whole number ≥ 1');
  for (const k of TIMES) if (!isFiniteNumber(o[k])) bad(k, 'is not a finite number');
  for (const k of NULLABLE_TIMES) if (o[k] !== null && !isFiniteNumber(o[k])) bad(k, 'is neither null nor a finite number');
  for (const k of COUNTS) if (!Number.isSafeInteger(o[k]) || (o[k] as number) < 0) bad(k, 'is not a whole number ≥ 0');
  if (o.tokenizer_tokens !== undefined && !(Number.isSafeInteger(o.tokenizer_tokens) && (o.tokenizer_tokens as number) >= 0)) bad('tokenizer_tokens', 'is not a whole number ≥ 0');
  const times = o.token_times_ms;
  if (!Array.isArray(times)) bad('token_times_ms', 'is not an array');
  for (let i = 0; i < (times as unknown[]).length; i++) if (!isFiniteNumber((times as unknown[])[i])) bad(`token_times_ms[${i}]`, 'is not a finite number');
}

/** A `load_energy` line as the driver writes it, or an error naming the file and the key. */
function checkLoadEnergy(line: Record<string, unknown>, path: string): LoadEnergyLine {
  const bad: Refuse = (key, what) => {
    throw new JoulebenchError('E_RESULTS', `${path}: the load_energy line's ${key} ${what}`);
  };
  if (line.run !== null) checkWindowReading(line.run, 'run', bad);
  if (line.steady !== null && line.steady !== undefined) {
    checkWindowReading(line.steady, 'steady', bad);
    const s = line.steady as Record<string, unknown>;
    if (!isFiniteNumber(s.start_ms) || !isFiniteNumber(s.end_ms)) bad('steady.start_ms/end_ms', 'are not finite numbers');
  }
  if (line.run_end_ms !== undefined && !isFiniteNumber(line.run_end_ms)) bad('run_end_ms', 'is not a finite number');
  checkIdle(line.idle, bad);
  if (line.pue !== undefined && !(isFiniteNumber(line.pue) && line.pue >= 1)) bad('pue', 'is not a number ≥ 1');
  return line as unknown as LoadEnergyLine;
}
