import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { aggregate, type BenchReport } from '../core/aggregate.js';
import { JoulebenchError } from '../core/errors.js';
import type { CaseResult } from '../core/types.js';
import { readResultsFile } from '../runner/results-file.js';
import type { History } from './history.js';
import { readReportFile } from './load.js';

/** A run loaded for `report`, `frontier` or `compare`: from a report file, a results JSONL or the history. */
export interface LoadedRun {
  /** Unique among the loaded runs: the file's base name or `#id`. */
  label: string;
  /** Where it came from: a path, or `history #id`. */
  origin: string;
  report: BenchReport;
  /** Scored case results when known (a results file, or one found next to the report). */
  results: CaseResult[] | null;
  receipt: Record<string, unknown> | null;
  run_id: number | null;
}

/** A run id on the command line: `12`, `#12` or `last` (when no file has that name). */
export function parseRunId(spec: string): number | 'last' | null {
  if (existsSync(spec)) return null;
  if (spec === 'last') return 'last';
  const m = /^#?(\d+)$/.exec(spec);
  return m ? Number(m[1]) : null;
}

/** True when `spec` names a history run rather than a file. */
export function isRunSpec(spec: string): boolean {
  return parseRunId(spec) !== null;
}

/**
 * Loads each spec: a report JSON (its `.results.jsonl` and `.receipt.json` siblings are picked up when
 * present), a results JSONL (aggregated here), or a history run id. `history` is opened by the caller
 * only when some spec is a run id.
 */
export function loadRuns(specs: readonly string[], history: History | null): LoadedRun[] {
  const runs = specs.map((spec) => loadRun(spec, history));
  const seen = new Map<string, number>();
  for (const r of runs) {
    const n = (seen.get(r.label) ?? 0) + 1;
    seen.set(r.label, n);
    if (n > 1) r.label = `${r.label} (${n})`;
  }
  return runs;
}

function loadRun(spec: string, history: History | null): LoadedRun {
  const id = parseRunId(spec);
  if (id !== null) {
    if (!history) throw new JoulebenchError('E_INPUT', `${spec}: no such file (run ids need the history, which is off)`);
    const runId = id === 'last' ? history.latestId() : id;
    const entry = runId === null ? null : history.get(runId);
    if (!entry) throw new JoulebenchError('E_INPUT', `${spec}: no such file, and no run ${spec} in ${history.path}`);
    const results = entry.results_path && existsSync(entry.results_path) ? scoredOf(entry.results_path) : null;
    return {
      label: `#${entry.id}`,
      origin: `history #${entry.id}`,
      report: entry.report as unknown as BenchReport,
      results,
      receipt: entry.receipt,
      run_id: entry.id,
    };
  }
  if (looksLikeResults(spec)) {
    const file = readResultsFile(spec);
    if (!file.header) throw new JoulebenchError('E_RESULTS', `${spec}: results file has no header line`);
    const h = file.header;
    const report = aggregate(file.results, {
      suite: { name: h.suite, version: h.suite_version, digest: h.suite_digest },
      target: h.target,
      meter: h.meter,
      warmup: h.warmup,
      repeats: h.repeats,
    });
    return {
      label: basename(spec).replace(/\.results\.jsonl$|\.jsonl$/i, ''),
      origin: spec,
      report,
      results: file.results.filter((r) => r.phase === 'scored'),
      receipt: readJsonIfExists(spec.replace(/\.results\.jsonl$/i, '.receipt.json'), spec),
      run_id: null,
    };
  }
  refuseOtherKinds(spec);
  const report = readReportFile(spec);
  const base = spec.replace(/\.json$/i, '');
  const resultsPath = `${base}.results.jsonl`;
  return {
    label: basename(base),
    origin: spec,
    report,
    results: existsSync(resultsPath) ? scoredOf(resultsPath) : null,
    receipt: readJsonIfExists(`${base}.receipt.json`, spec),
    run_id: null,
  };
}

/** Report kinds that are not suite runs have their own readers; say which, instead of "not a report". */
function refuseOtherKinds(path: string): void {
  let format: unknown;
  try {
    format = (JSON.parse(readFileSync(path, 'utf8')) as { format?: unknown } | null)?.format;
  } catch {
    return; // readReportFile gives the precise message
  }
  if (format === 'joulebench-infer/1') {
    throw new JoulebenchError('E_REPORT', `${path}: a joulebench infer run file, not a suite report (read it with: joulebench infer --report ${path})`);
  }
}

function scoredOf(path: string): CaseResult[] {
  return readResultsFile(path).results.filter((r) => r.phase === 'scored');
}

/** A results JSONL by name, or by content (its first line is a `header` record). */
function looksLikeResults(path: string): boolean {
  if (/\.jsonl$/i.test(path)) return true;
  try {
    const head = readFileSync(path, 'utf8').slice(0, 64);
    return /^\{"record":"header"/.test(head);
  } catch {
    return false;
  }
}

function readJsonIfExists(path: string, forSpec: string): Record<string, unknown> | null {
  if (path === forSpec || !existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}
