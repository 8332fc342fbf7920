import { HTML_CASE_ROWS } from '../page-limits.js';
import { nearestRank } from '../../core/stats.js';
import type { CaseResult } from '../../core/types.js';
import { codeArms, inputsFrontier, type InputsFrontier } from '../arms.js';
import { inferArmViews } from '../infer-view.js';
import type { CaseLatency, LoadedInfer, LoadedRun, ReportInput } from '../inputs.js';
import { resolvePrompts } from '../case-prompts.js';
import { resolveCodePrompts } from '../code-prompts.js';
import { inferTargetWhere } from '../../infer/where.js';
import type { SweepComparison } from '../../sweep/comparison.js';
import { rateCurvesOf, type RateCurveView } from './rate-section.js';
import { energyViewsOf, type EnergyView } from './energy-section.js';

/** One case row of the HTML table: a trimmed CaseResult (its prompt is `runs[…].prompts.turns[index]`). */
type CaseFields = 'index' | 'dataset' | 'pass' | 'stage' | 'passed' | 'joules' | 'below_floor' | 'latency_ms' | 'ttft_ms' | 'cost_usd';
export type HtmlCase = Pick<CaseResult, CaseFields> & {
  run: string;
  id: string;
  source: string;
  /** Clipped to MAX_TEXT characters. */
  expected: string | null;
  response: string | null;
  /** A multi-turn case asked as a conversation: each turn's answer (clipped like `response`). */
  turn_answers?: (string | null)[];
  error: string | null;
};

/** A run's prompts, read back from its suite (src/report/case-prompts.ts), or why they are not shown. */
export interface HtmlPrompts {
  /** The bundled suite's name or the suite file the prompts were read from; null when none are shown. */
  source: string | null;
  /** Why no prompt is shown (suite file not found, suite changed since the run…); null when they are. */
  missing: string | null;
  /** Each drawn case's turns by its suite index (once per case, however many passes), clipped. */
  turns: Record<number, string[]>;
  /** Cases whose prompt was left out to keep the page small (PROMPT_BUDGET_CHARS). */
  omitted: number;
}

/** Everything the page draws, embedded as JSON: the page script reads only this. */
export interface HtmlModel {
  format: 'joulebench-html/1';
  generated_utc: string;
  runs: (Pick<LoadedRun, 'label' | 'origin' | 'report' | 'receipt'> & {
    has_cases: boolean;
    /** Each case's prompt, or why it is not shown; null when the run has no per-case results. */
    prompts: HtmlPrompts | null;
    /** Nearest-rank percentiles over the per-case latencies at full precision (the report truncates to whole ms). */
    case_latency_ms: CaseLatency | null;
  })[];
  /** Coding-agent results files: each solver is an arm (accuracy = resolution %). */
  code: ReturnType<typeof codeModel>[];
  /** Infer run files: arms (model × threads) with no accuracy, so never on a frontier. */
  infer: ReturnType<typeof inferModel>[];
  frontier: InputsFrontier;
  cases: HtmlCase[];
  /** Cases dropped from the table to keep the file small (never from any figure). */
  cases_omitted: number;
  /** Load runs (`run --request-rate`) grouped into rate curves: throughput, latency and J/output token per rate. */
  rate_curves: RateCurveView[];
  /** Per input that has them: its power trace, its energy windows' validity and its boundary layers. */
  energy: EnergyView[];
  /** Sweep comparisons (`report SWEEP_DIR --html`): intervals, frontier marks, verdicts against the baseline. */
  sweeps?: SweepComparison[];
}

/** Longest response kept per row, characters. */
const MAX_TEXT = 400;
/** Longest prompt turn kept, characters. */
const MAX_PROMPT_TURN = 2000;
/** Prompt text the page embeds at most, characters over every run; past it a case's detail says where to read it. */
export const PROMPT_BUDGET_CHARS = 3_000_000;

/** Builds the page's data from loaded runs. Pure apart from the timestamp the caller passes. */
export function buildHtmlModel(loaded: readonly (LoadedRun | ReportInput)[], generated_utc: string, maxCases = HTML_CASE_ROWS): HtmlModel {
  const inputs: ReportInput[] = loaded.map((x) => ('kind' in x ? x : { kind: 'suite' as const, ...x }));
  const runs = inputs.filter((x): x is Extract<ReportInput, { kind: 'suite' }> => x.kind === 'suite');
  const cases: HtmlCase[] = [];
  let omitted = 0;
  const prompts = new Map<string, HtmlPrompts>();
  let budget = PROMPT_BUDGET_CHARS;
  for (const run of runs) {
    if (!run.results) continue;
    const lookup = resolvePrompts(run.header, run.results);
    const p: HtmlPrompts = lookup.ok ? { source: lookup.source, missing: null, turns: {}, omitted: 0 } : { source: null, missing: lookup.reason, turns: {}, omitted: 0 };
    prompts.set(run.label, p);
    const left = new Set<number>();
    for (const r of run.results) {
      if (cases.length >= maxCases) {
        omitted++;
        continue;
      }
      cases.push(toRow(run.label, r));
      if (!lookup.ok || r.index in p.turns || left.has(r.index)) continue;
      const turns = (lookup.turnsOf(r.index) ?? []).map(clipPrompt);
      const size = turns.reduce((n, t) => n + t.length, 0);
      if (size > budget) {
        left.add(r.index);
        p.omitted++;
        continue;
      }
      budget -= size;
      p.turns[r.index] = turns;
    }
    // A run read with only its first cases whole: the others were never loaded, and are not shown either.
    if (run.scored_total !== undefined) omitted += run.scored_total - run.results.length;
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
      prompts: prompts.get(r.label) ?? null,
      case_latency_ms: r.case_latency_ms ?? (r.results ? caseLatency(r.results) : null),
    })),
    code: inputs.flatMap((x) => (x.kind === 'code' ? [codeModel(x)] : [])),
    infer: inputs.flatMap((x) => (x.kind === 'infer' ? [inferModel(x)] : [])),
    frontier: inputsFrontier(inputs),
    rate_curves: rateCurvesOf(runs),
    energy: energyViewsOf(inputs),
    cases,
    cases_omitted: omitted,
  };
}

function inferModel({ label, origin, file }: LoadedInfer) {
  const target = `${file.target.kind} ${inferTargetWhere(file.target)}`;
  const { prompt_sha256, started_utc, finished_utc } = file;
  const receipt = file.receipts as unknown as Record<string, unknown>;
  return { label, origin, prompt_sha256, target, started_utc, finished_utc, arms: inferArmViews(label, file), receipt };
}

/** A coding-agent results file as the page shows it; `grid` is task × solver over the rollouts. */
function codeModel(x: Extract<ReportInput, { kind: 'code' }>) {
  const r = x.results;
  const arms = codeArms(x.label, r);
  const invalid: Record<string, string[]> = {};
  for (const d of r.datapoints) if (!d.valid) (invalid[d.solver] ??= []).push(d.invalid_reason ?? 'invalid');
  return {
    label: x.label,
    origin: x.origin,
    suite: { name: r.suite.name, digest: r.suite.digest ?? '', tasks: r.suite.tasks.length },
    rollouts: r.config.rollouts,
    /** `--energy-budget` of the results, J per task attempt; null when none. */
    energy_budget_j: r.config.energy_budget_j ?? null,
    meter: r.config.meter.id,
    sandbox: String(r.config.sandbox?.kind ?? 'n/a'),
    solvers: r.solvers.map((s, i) => ({ ...s, arm: arms[i]!.id, wall_p95_ms: arms[i]!.latency_p95_ms })),
    /** Reasons datapoints were invalid, per solver. */
    invalid_reasons: Object.fromEntries(Object.entries(invalid).map(([solver, reasons]) => [solver, [...new Set(reasons)]])),
    grid: taskGrid(r),
    /** Each task's prompt (task.toml) read back from the suite while its digest matches, or why not. */
    prompts: codePrompts(r.suite),
    receipt: r.receipt ?? null,
  };
}

function codePrompts(suite: Extract<ReportInput, { kind: 'code' }>['results']['suite']) {
  const p = resolveCodePrompts(suite);
  if (!p.ok) return { source: null, missing: p.reason, by_task: {} as Record<string, string> };
  return { source: p.source, missing: null, by_task: Object.fromEntries(Object.entries(p.prompts).map(([k, v]) => [k, clipPrompt(v)])) };
}

type GridCell = { outcome: 'resolved' | 'not' | 'invalid'; resolved: number; rollouts: number };

/** Task × solver outcome over the rollouts: resolved (any rollout), invalid (every rollout), else not resolved. */
function taskGrid(r: Extract<ReportInput, { kind: 'code' }>['results']) {
  const solvers = r.solvers.map((s) => s.solver);
  const tasks = [...r.suite.tasks];
  const cells: Record<string, Record<string, GridCell>> = {};
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

function caseLatency(results: readonly CaseResult[]): CaseLatency {
  const ms = results.filter((r) => r.error === null).map((r) => r.latency_ms);
  return { p50: nearestRank(ms, 50), p95: nearestRank(ms, 95), p99: nearestRank(ms, 99) };
}

function toRow(run: string, r: CaseResult): HtmlCase {
  return {
    run,
    index: r.index,
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
    ...(r.turns && r.turns.length > 1 ? { turn_answers: r.turns.map((t) => clip(t.response)) } : {}),
    error: r.error ? `${r.error.code}${r.error.status ? ` ${r.error.status}` : ''}: ${r.error.message}` : null,
  };
}

const clipPrompt = (s: string): string =>
  s.length <= MAX_PROMPT_TURN ? s : `${s.slice(0, MAX_PROMPT_TURN)}… (${s.length - MAX_PROMPT_TURN} more characters)`;
const clip = (s: string | null): string | null =>
  s === null || s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT)}…`;
