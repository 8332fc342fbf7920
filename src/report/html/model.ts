import type { BenchReport } from '../../core/aggregate.js';
import { armFrontiers, type FrontierReport } from '../../core/frontier.js';
import { nearestRank } from '../../core/stats.js';
import type { CaseResult } from '../../core/types.js';
import { armOf } from '../frontier-table.js';
import type { LoadedRun } from '../inputs.js';

/** One case row of the HTML table (a trimmed CaseResult). */
export interface HtmlCase {
  run: string;
  id: string;
  dataset: string;
  pass: number;
  stage: string | null;
  passed: boolean | null;
  joules: number | null;
  source: string;
  below_floor: boolean;
  latency_ms: number;
  ttft_ms: number | null;
  cost_usd: number | null;
  expected: string | null;
  response: string | null;
  error: string | null;
}

/** Everything the page draws, embedded as JSON: the page script reads only this. */
export interface HtmlModel {
  format: 'joulebench-html/1';
  generated_utc: string;
  runs: {
    label: string;
    origin: string;
    report: BenchReport;
    receipt: Record<string, unknown> | null;
    has_cases: boolean;
    /** Nearest-rank percentiles over the per-case latencies at full precision (the report truncates to whole ms). */
    case_latency_ms: { p50: number | null; p95: number | null; p99: number | null } | null;
  }[];
  frontier: FrontierReport;
  cases: HtmlCase[];
  /** Cases dropped from the table to keep the file small (never from any figure). */
  cases_omitted: number;
}

/** Longest response kept per row, characters. */
const MAX_TEXT = 400;

/** Builds the page's data from loaded runs. Pure apart from the timestamp the caller passes. */
export function buildHtmlModel(runs: readonly LoadedRun[], generated_utc: string, maxCases = 20_000): HtmlModel {
  const cases: HtmlCase[] = [];
  let omitted = 0;
  for (const run of runs) {
    for (const r of run.results ?? []) {
      if (cases.length >= maxCases) {
        omitted++;
        continue;
      }
      cases.push(toRow(run.label, r));
    }
  }
  return {
    format: 'joulebench-html/1',
    generated_utc,
    runs: runs.map((r) => ({
      label: r.label,
      origin: r.origin,
      report: r.report,
      receipt: r.receipt,
      has_cases: r.results !== null,
      case_latency_ms: r.results ? caseLatency(r.results) : null,
    })),
    frontier: armFrontiers(runs.map(armOf)),
    cases,
    cases_omitted: omitted,
  };
}

function caseLatency(results: readonly CaseResult[]): { p50: number | null; p95: number | null; p99: number | null } {
  const ms = results.filter((r) => r.error === null).map((r) => r.latency_ms);
  return { p50: nearestRank(ms, 50), p95: nearestRank(ms, 95), p99: nearestRank(ms, 99) };
}

function toRow(run: string, r: CaseResult): HtmlCase {
  return {
    run,
    id: r.case_id,
    dataset: r.dataset,
    pass: r.pass,
    stage: r.stage,
    passed: r.passed,
    joules: r.joules,
    source: r.energy_source,
    below_floor: r.below_floor,
    latency_ms: r.latency_ms,
    ttft_ms: r.ttft_ms,
    cost_usd: r.cost_usd,
    expected: clip(r.expected),
    response: clip(r.response),
    error: r.error ? `${r.error.code}${r.error.status ? ` ${r.error.status}` : ''}: ${r.error.message}` : null,
  };
}

function clip(s: string | null): string | null {
  return s === null || s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT)}…`;
}
