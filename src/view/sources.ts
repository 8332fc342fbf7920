import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import type { BenchReport } from '../core/aggregate.js';
import { History, historyKind, type HistoryRun } from '../report/history.js';
import { codeHistoryInput, inferHistoryInput } from '../report/history-inputs.js';
import { loadInputs } from '../report/load-inputs.js';
import type { ReportInput } from '../report/inputs.js';
import { isRateSweepFile, rateSweepRunFiles } from '../load/sweep-file.js';
import { isSweepDir, readSweepState } from '../sweep/state.js';

type Listed = 'suite' | 'target' | 'accuracy_pct' | 'joules_per_correct' | 'usd_per_correct' | 'latency_p95_ms' | 'energy_source' | 'results_path';

/** One run the viewer lists: a history row or a file named on the command line. Keys are the only handle a URL carries. */
export type ViewRun = Pick<HistoryRun, Listed> & {
  key: string;
  /** What `loadInputs` reads: a history id (`#12`), or a path (a named sweep's are relative to where it ran). */
  spec: string;
  origin: string;
  kind: string;
  date: string | null;
  model: string | null;
  sweep: string | null;
};

/** A named sweep folder or rate-sweep document: several runs shown on one page. */
export interface ViewGroup {
  key: string;
  kind: 'sweep' | 'load';
  label: string;
  path: string;
  runs: string[];
}

export interface ViewSources {
  history: History | null;
  runs: ViewRun[];
  groups: ViewGroup[];
  byKey: Map<string, ViewRun>;
}

/** What the receipt says the target's model was, else null (never guessed from the target string). */
function modelOf(receipt: Record<string, unknown> | null): string | null {
  const t = receipt?.target as Record<string, unknown> | undefined;
  const m = t?.model ?? (receipt?.config as Record<string, unknown> | undefined)?.model;
  return typeof m === 'string' ? m : null;
}

function historyRow(h: HistoryRun, model: string | null): ViewRun {
  const { suite, target, accuracy_pct, joules_per_correct, usd_per_correct, latency_p95_ms, energy_source, results_path } = h;
  const listed = { suite, target, accuracy_pct, joules_per_correct, usd_per_correct, latency_p95_ms, energy_source, results_path };
  const date = h.finished_utc ?? h.started_utc ?? h.recorded_utc;
  const origin = h.report_path ?? h.results_path ?? `history #${h.id}`;
  return { key: `h${h.id}`, spec: `#${h.id}`, origin, kind: historyKind(h.kind), date, model, sweep: h.sweep_id, ...listed };
}

/** A file's row from its loaded input (the same figures the history would list for it). */
function fileRow(key: string, spec: string, input: ReportInput, sweep: string | null): ViewRun {
  const base = { key, spec, origin: spec, sweep, model: null as string | null, results_path: null as string | null };
  if (input.kind !== 'suite') {
    const f = (input.kind === 'code' ? codeHistoryInput(input.results) : inferHistoryInput(input.file, spec)).fields!;
    const rc = input.kind === 'code' ? (input.results.receipt ?? null) : null;
    return { ...base, kind: input.kind, date: (rc?.finished_utc as string | undefined) ?? (input.kind === 'infer' ? input.file.finished_utc : null), suite: f.suite ?? null, target: f.target ?? null, accuracy_pct: f.accuracy_pct ?? null, joules_per_correct: f.joules_per_correct ?? null, usd_per_correct: f.usd_per_correct ?? null, latency_p95_ms: null, energy_source: f.energy_source ?? null };
  }
  const r: BenchReport = input.report;
  const rc = input.receipt;
  return {
    ...base,
    kind: 'suite',
    model: modelOf(rc),
    results_path: input.results_path ?? (/\.json$/i.test(spec) && existsSync(spec.replace(/\.json$/i, '.results.jsonl')) ? spec.replace(/\.json$/i, '.results.jsonl') : null),
    date: typeof rc?.finished_utc === 'string' ? rc.finished_utc : null,
    suite: r.suite?.name ?? null,
    target: r.target ?? null,
    accuracy_pct: r.accuracy_pct,
    joules_per_correct: r.joules_per_correct,
    usd_per_correct: r.usd_per_correct ?? null,
    latency_p95_ms: r.latency_p95_ms,
    energy_source: r.energy_source,
  };
}

/** Everything the viewer may show: the history's runs (read-only) and the paths named on the command line; nothing else. */
export async function openSources(paths: readonly string[], historyPath: string | null): Promise<ViewSources> {
  const history = historyPath && existsSync(historyPath) ? await History.open(historyPath, { readonly: true }) : null;
  const runs: ViewRun[] = (history?.list() ?? []).map((h) => historyRow(h, modelOf(history!.get(h.id)?.receipt ?? null)));
  const groups: ViewGroup[] = [];
  const files: { spec: string; sweep: string | null; group: ViewGroup | null }[] = [];
  for (const p of paths.map((x) => resolve(x))) {
    if (isSweepDir(p)) {
      const s = readSweepState(p);
      const group: ViewGroup = { key: `s${groups.length}`, kind: 'sweep', label: `${basename(p)} (sweep ${s.id})`, path: p, runs: [] };
      groups.push(group);
      const arms = s.runs.filter((e) => e.status === 'done' && existsSync(e.report)).map((e) => resolve(e.report));
      files.push(...arms.map((spec) => ({ spec, sweep: s.id, group })));
    } else if (isRateSweepFile(p)) {
      const group: ViewGroup = { key: `s${groups.length}`, kind: 'load', label: basename(p), path: p, runs: [] };
      groups.push(group);
      files.push(...rateSweepRunFiles(p, existsSync).map((spec) => ({ spec: resolve(spec), sweep: basename(p), group })));
    } else files.push({ spec: p, sweep: null, group: null });
  }
  const loaded = loadInputs(files.map((f) => f.spec), null, { cases: false });
  loaded.forEach((input, i) => {
    const f = files[i]!;
    const row = fileRow(`f${i}`, f.spec, input, f.sweep);
    runs.push(row);
    f.group?.runs.push(row.key);
  });
  return { history, runs, groups, byKey: new Map(runs.map((r) => [r.key, r])) };
}
