import type { BenchReport } from '../../core/aggregate.js';
import type { SolverSummary } from '../../code/aggregate.js';
import { nearestRank } from '../../core/stats.js';
import type { CaseResult } from '../../core/types.js';
import { codeArms, inputsFrontier, type InputsFrontier } from '../arms.js';
import { inferArmViews, type InferArmView } from '../infer-view.js';
import type { LoadedRun, ReportInput } from '../inputs.js';
import { inferTargetWhere } from '../../infer/where.js';
import type { SweepComparison } from '../../sweep/comparison.js';
import { rateCurvesOf, type RateCurveView } from './rate-section.js';

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
  /** Coding-agent results files: each solver is an arm (accuracy = resolution %). */
  code: {
    label: string;
    origin: string;
    suite: { name: string; digest: string; tasks: number };
    rollouts: number;
    meter: string;
    sandbox: string;
    solvers: (SolverSummary & { arm: string; wall_p95_ms: number | null })[];
    /** Reasons datapoints were invalid, per solver. */
    invalid_reasons: Record<string, string[]>;
    /** Task × solver outcome over the rollouts: resolved (any rollout), invalid (every rollout), else not resolved. */
    grid: { tasks: string[]; solvers: string[]; cells: Record<string, Record<string, { outcome: 'resolved' | 'not' | 'invalid'; resolved: number; rollouts: number }>> };
    receipt: Record<string, unknown> | null;
  }[];
  /** Infer run files: arms (model × threads) with no accuracy, so never on a frontier. */
  infer: {
    label: string;
    origin: string;
    prompt_sha256: string;
    target: string;
    started_utc: string;
    finished_utc: string;
    arms: InferArmView[];
    receipt: Record<string, unknown>;
  }[];
  frontier: InputsFrontier;
  cases: HtmlCase[];
  /** Cases dropped from the table to keep the file small (never from any figure). */
  cases_omitted: number;
  /** Load runs (`run --request-rate`) grouped into rate curves: throughput, latency and J/output token per rate. */
  rate_curves: RateCurveView[];
  /** Sweep comparisons (`report SWEEP_DIR --html`): intervals, frontier marks, verdicts against the baseline. */
  sweeps?: SweepComparison[];
}

/** Longest response kept per row, characters. */
const MAX_TEXT = 400;

/** Builds the page's data from loaded runs. Pure apart from the timestamp the caller passes. */
export function buildHtmlModel(loaded: readonly (LoadedRun | ReportInput)[], generated_utc: string, maxCases = 20_000): HtmlModel {
  const inputs: ReportInput[] = loaded.map((x) => ('kind' in x ? x : { kind: 'suite' as const, ...x }));
  const runs = inputs.filter((x): x is Extract<ReportInput, { kind: 'suite' }> => x.kind === 'suite');
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
    code: inputs.flatMap((x) => (x.kind === 'code' ? [codeModel(x)] : [])),
    infer: inputs.flatMap((x) =>
      x.kind === 'infer'
        ? [
            {
              label: x.label,
              origin: x.origin,
              prompt_sha256: x.file.prompt_sha256,
              target: `${x.file.target.kind} ${inferTargetWhere(x.file.target)}`,
              started_utc: x.file.started_utc,
              finished_utc: x.file.finished_utc,
              arms: inferArmViews(x.label, x.file),
              receipt: x.file.receipts as unknown as Record<string, unknown>,
            },
          ]
        : [],
    ),
    frontier: inputsFrontier(inputs),
    rate_curves: rateCurvesOf(runs),
    cases,
    cases_omitted: omitted,
  };
}

function codeModel(x: Extract<ReportInput, { kind: 'code' }>): HtmlModel['code'][number] {
  const r = x.results;
  const arms = codeArms(x.label, r);
  const invalid: Record<string, string[]> = {};
  for (const d of r.datapoints) {
    if (d.valid) continue;
    const list = (invalid[d.solver] ??= []);
    const why = d.invalid_reason ?? 'invalid';
    if (!list.includes(why)) list.push(why);
  }
  return {
    label: x.label,
    origin: x.origin,
    suite: { name: r.suite.name, digest: r.suite.digest ?? '', tasks: r.suite.tasks.length },
    rollouts: r.config.rollouts,
    meter: r.config.meter.id,
    sandbox: String(r.config.sandbox?.kind ?? 'n/a'),
    solvers: r.solvers.map((s, i) => ({ ...s, arm: arms[i]!.id, wall_p95_ms: arms[i]!.latency_p95_ms })),
    invalid_reasons: invalid,
    grid: taskGrid(r),
    receipt: r.receipt ?? null,
  };
}

function taskGrid(r: Extract<ReportInput, { kind: 'code' }>['results']): HtmlModel['code'][number]['grid'] {
  const solvers = r.solvers.map((s) => s.solver);
  const tasks = [...r.suite.tasks];
  const cells: HtmlModel['code'][number]['grid']['cells'] = {};
  for (const t of tasks) {
    cells[t] = {};
    for (const s of solvers) {
      const dps = r.datapoints.filter((d) => d.task === t && d.solver === s);
      const resolved = dps.filter((d) => d.resolved).length;
      const outcome = resolved > 0 ? 'resolved' : dps.length > 0 && dps.every((d) => !d.valid) ? 'invalid' : 'not';
      cells[t]![s] = { outcome, resolved, rollouts: dps.length };
    }
  }
  return { tasks, solvers, cells };
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
