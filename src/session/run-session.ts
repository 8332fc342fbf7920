import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { checkWritePath } from '../write-path.js';
import { basename, dirname, join, resolve } from 'node:path';
import type { BenchReport, ReportContext } from '../core/aggregate.js';
import { judgeResultsFile } from '../judge/results-file.js';
import { createJudgeFromConfig } from './judge-setup.js';
import type { JudgeConfig } from '../config/schema.js';
import { prettyJson } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import { MmluTally, type MeasurementBlock } from '../core/measurements.js';
import { co2eOf, type Co2e } from '../core/co2e.js';
import { localPrices } from '../core/usd-parts.js';
import { parseGridIntensity } from '../energy-model/grid.js';
import type { CaseResult, PromptStorage, StreamedSuite, Suite } from '../core/types.js';
import { isBundledSuite } from '../suites/loader.js';
import { loadConfig, parseConfig, type LoadedConfig } from '../config/load.js';
import { createMeter } from '../meters/registry.js';
import { PowerTrace } from '../meters/power-trace.js';
import { defaultHistoryPath, History, type HistoryInput } from '../report/history.js';
import { buildReceipt, type Receipt } from '../report/receipt.js';
import { JsonlResultsFile, truncateResultsFile, type ResultsSink } from '../runner/results-file.js';
import { readResumeFile, type ResumeFile } from '../runner/resume-index.js';
import { reportWarnings } from '../report/run-warnings.js';
import { resultsFileState } from '../runner/results-state.js';
import { run, toSuiteWindow, type RunOutcome, type RunProgress } from '../runner/run.js';
import { checkTarget, createTarget, type TargetSpec } from '../targets/registry.js';
import { runLoad } from '../load/driver.js';
import { buildSuite, buildTargetSpec, withTargetOptions } from './setup.js';
import { selectCases } from '../suites/select.js';
import { datasetSuite } from '../load/dataset.js';
import { loadTokenizer } from '../load/tokenizer.js';
import { suiteDigest } from '../suites/digest.js';
import { isStreamed } from '../suites/jsonl-stream.js';
import { suiteSourceOf, type SuiteSourceFields } from './suite-source.js';
import type { SessionSpec } from './spec.js';

/** Where a session's files are. `report` is absent when the report was only returned. */
export interface SessionPaths {
  report?: string;
  results: string;
  receipt: string;
}

/** How a caller watches a session; the session itself prints nothing. */
export interface SessionHooks {
  /** The environment `credentialsRef` is read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Once the files are chosen and the meter reads, before the first case. */
  onStart?(info: { paths: SessionPaths; total_cases: number; suite: Suite | StreamedSuite; resumed_cases: number }): void;
  /** After every case (warmup included). */
  onResult?(result: CaseResult, progress: RunProgress): void;
  /** Things a person should know (a dropped meter sample, a measurement caveat, history not written). */
  onWarning?(message: string): void;
  /** Every record written to the results file, as it is written (a queue worker streams them back). */
  onRecord?(record: Record<string, unknown>): void;
  /** Stops the run: buffered results are written to disk at once, and the run ends with `E_RUN` at the next case. */
  signal?: AbortSignal;
  /** The first failure of each kind (error code and HTTP status), as it happens. */
  onFirstError?(result: CaseResult): void;
}

/** The report a session writes: the aggregate, plus MMLU's measurements block for `--suite mmlu`. */
export type SessionReport = BenchReport & { measurements?: MeasurementBlock['measurements']; measurement_warnings?: string[]; co2e?: Co2e };

/** What a finished session hands back. */
export interface SessionResult {
  /** The report as written (MMLU runs carry their `measurements` block). */
  report: SessionReport;
  receipt: Receipt;
  paths: SessionPaths;
  /** The history row, or null when not recorded. */
  history_id: number | null;
  /** The suite run: in memory, or (a JSONL suite file or MMLU data, not a load run) streamed from its file(s). */
  suite: Suite | StreamedSuite;
  outcome: RunOutcome;
  /** Cases already on disk from the interrupted run this one continued (0 for a fresh run). */
  resumed_cases: number;
}

/**
 * One run, end to end: config → suite → target → meter → resume → results file → report → receipt →
 * history. It prints nothing and never exits; problems are thrown as typed errors, the rest goes to `hooks`.
 */
export async function runSession(spec: SessionSpec, hooks: SessionHooks = {}): Promise<SessionResult> {
  const started = new Date();
  const env = hooks.env ?? process.env;
  const cfg = configOf(spec.config);
  const grid = spec.grid_intensity !== undefined ? parseGridIntensity(spec.grid_intensity) : null;
  const prices = localPrices(spec.prices, cfg?.config.prices);
  if (spec.load?.dataset?.tokenizer !== undefined) await loadTokenizer(spec.load.dataset.tokenizer);
  const suite = sessionSuite(spec, cfg);
  const caseCount = isStreamed(suite) ? suite.stream.count : suite.cases.length;
  const targetSpec = datasetTarget(withTargetOptions(buildTargetSpec(spec, cfg, env), spec.target_options), spec);
  const warmup = spec.warmup ?? defaultWarmup(targetSpec.kind);
  const repeat = spec.repeat ?? 1;
  // Every argument is checked before anything is opened: a bad one costs no target, meter, judge or file.
  const resumeFrom = checkRunFlags(spec);
  const paths = outputPaths({ ...spec, ...(resumeFrom ? { results: resumeFrom } : {}) }, suite.name, started);
  checkOutputPaths(paths);
  const resume = resumeFrom ? readForResume(resumeFrom, caseCount) : undefined;
  if (!resume && !spec.overwrite) refuseToClobber(paths.results);
  const judgeBlock = judgeBlockFor(suite, cfg, hooks);

  // What the session opens is closed here, newest first, on every path out (a thrown error included).
  const opened = new Opened();
  try {
    // The judge is built before anything runs, so a bad judge block costs nothing.
    const judgeSetup = judgeBlock ? opened.add(await createJudgeFromConfig(judgeBlock.block, judgeBlock.where, spec, env), (j) => j.close()) : null;
    const judgeOnly = opened.size;
    const target = opened.add(await createTarget(targetSpec), (t) => t.close?.());
    const meter = opened.add(await createMeter(spec.meter ?? 'auto', spec.meter_options ?? {}), (m) => m.close?.());
    const probe = await meter.probe();
    if (!probe.available) throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
    if (spec.power_trace !== undefined && meter.usesTargetEnergy) {
      throw new JoulebenchError('E_USAGE', `--power-trace: meter ${meter.id} reads no hardware (energy comes from the target); choose --meter rapl, nvml, amdsmi or one that reads here`);
    }
    // Ended before the meter closes, also when the run throws (its timer would go on reading a closed meter).
    const trace = spec.power_trace !== undefined ? opened.add(new PowerTrace(meter), (t) => t.end().catch(() => undefined)) : null;
    if (resume) {
      opened.add(resume.finished, (f) => f.close());
      // A torn last line (SIGKILL mid-write) is cut off the file so the appended lines start clean.
      if (resume.torn_bytes > 0) truncateResultsFile(resume.path, resume.good_bytes);
    }
    const file = opened.add(new JsonlResultsFile(paths.results, { append: resume !== undefined }), (f) => f.close());
    const sink = sessionSink(file, suiteSourceOf(spec), hooks.onRecord);
    const onAbort = (): void => file.flush();
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    opened.add(hooks.signal, (signal) => signal?.removeEventListener('abort', onAbort));
    const totalCases = spec.load ? warmup * caseCount + (spec.load.num_requests ?? caseCount) : (warmup + repeat) * caseCount;
    hooks.onStart?.({ paths, total_cases: totalCases, suite, resumed_cases: resume?.case_lines ?? 0 });
    let outcome: RunOutcome;
    // MMLU's seed-003 measurements block (a load run adds nothing to it, as before).
    const tally = spec.suite === 'mmlu' ? new MmluTally() : null;
    const common = {
      target,
      meter,
      sink,
      warmup,
      prompts: promptStorage(spec),
      ...(prices ? { prices } : {}),
      ...(spec.idle_ms !== undefined ? { idle_ms: spec.idle_ms } : {}),
      ...(spec.pue !== undefined ? { pue: spec.pue } : {}),
      ...(trace ? { trace } : {}),
      ...(hooks.signal ? { signal: hooks.signal } : {}),
      ...(hooks.onResult ? { onResult: hooks.onResult } : {}),
    };
    if (spec.load) {
      if (isStreamed(suite)) throw new Error('a load run streams no suite'); // built in memory above
      const l = await runLoad({ ...common, suite, load: { ...spec.load, num_requests: spec.load.num_requests ?? caseCount } });
      outcome = { report: l.report, header: l.header, results: [], energy: { idle: l.idle, suite: l.run, gross_from: 'suite-window' } };
      for (const note of l.report.load.notes) hooks.onWarning?.(note);
    } else {
      outcome = await run({
        ...common,
        suite,
        repeats: repeat,
        concurrency: spec.concurrency ?? 1,
        ...(spec.bootstrap !== undefined ? { bootstrap: spec.bootstrap } : {}),
        ...(spec.bootstrap_max_units !== undefined ? { bootstrap_max_units: spec.bootstrap_max_units } : {}),
        ...(spec.shared ? { shared: true } : {}),
        ...(spec.cluster !== undefined ? { cluster: spec.cluster } : {}),
        ...(resume ? { resume: { header: resume.header, finished: resume.finished, path: resume.path } } : {}),
        // No result is kept: MMLU's measurements are added up as the scored results come.
        keepResults: false,
        ...(tally ? { onScored: (r: CaseResult) => tally.add(r) } : {}),
        ...(spec.max_errors !== undefined ? { max_errors: spec.max_errors } : {}),
        ...(hooks.onFirstError ? { onFirstError: hooks.onFirstError } : {}),
      });
    }
    // Target, meter and results file are done with before the judge runs (a local model's memory is freed for it).
    await opened.close(judgeOnly);
    // The judge runs after the system under test, outside its energy windows; its figures are reported apart.
    let judged: BenchReport | null = null;
    if (judgeSetup) {
      if (isStreamed(suite)) throw new Error('a judged suite is not streamed'); // built in memory above
      judged = (await judgeResultsFile({ path: paths.results, suite, judge: judgeSetup.judge, info: judgeSetup.info, energy: reportEnergy(outcome) })).report;
    }
    const finished = new Date();

    // MMLU's seed-003 measurements (with class and official flags) ride along as an extra block.
    const block = tally ? tally.block({ retry_enabled: Boolean(cfg?.config.params?.retry), prices_set: cfg?.config.prices?.input_usd_per_mtok !== undefined }) : null;
    const base = judged ?? outcome.report;
    const withBlock: SessionReport = block ? { ...base, measurements: block.measurements, measurement_warnings: block.warnings } : base;
    // gCO2e from net energy, labelled with the intensity used; only when asked (other reports keep their bytes).
    const report: SessionReport = grid ? { ...withBlock, co2e: co2eOf(base, grid) } : withBlock;
    for (const w of block?.warnings ?? []) hooks.onWarning?.(w);
    const receipt = buildReceipt({
      started,
      finished,
      argv: spec.argv ?? [],
      extra: {
        suite: { name: suite.name, version: suite.version, digest: outcome.header.suite_digest, source: suite.source, cases: caseCount },
        config_digest: outcome.header.config_digest,
        target: target.describe(),
        ...(judgeSetup ? { judge: judgeSetup.describe } : {}),
        meter: { id: meter.id, probe, ...meter.describe() },
        energy: {
          idle: outcome.energy.idle,
          suite_window: outcome.energy.suite,
          gross_from: outcome.energy.gross_from,
        },
        files: { report: paths.report ?? '(stdout)', results: paths.results },
        ...(resume ? { resumed: { from: paths.results, finished_before: resume.case_lines, torn_bytes_dropped: resume.torn_bytes } } : {}),
        ...(spec.labels && Object.keys(spec.labels).length > 0 ? { labels: spec.labels } : {}),
      },
    });
    writeEnsured(paths.receipt, prettyJson(receipt));
    if (trace && spec.power_trace !== undefined) writeEnsured(spec.power_trace, trace.csv());
    const history_id =
      spec.history === false
        ? null
        : await recordHistory(spec.history?.path ?? defaultHistoryPath(env), { report, receipt, config_digest: outcome.header.config_digest, paths }, hooks);
    if (paths.report) writeEnsured(paths.report, prettyJson(report));
    // Meter warnings (a dropped RAPL sample, a failed read) always reach the caller.
    for (const w of outcome.energy.suite?.warnings ?? []) hooks.onWarning?.(w);
    for (const w of target.warnings?.() ?? []) hooks.onWarning?.(w);
    // MMLU's measurement block already says why mmlu.cost_usd is missing.
    for (const w of reportWarnings(outcome.report)) if (!block?.warnings.some((b) => b.includes('cost_usd'))) hooks.onWarning?.(w);
    return { report, receipt, paths, history_id, suite, outcome, resumed_cases: resume?.case_lines ?? 0 };
  } finally {
    await opened.close();
  }
}

/** What a session opened, closed newest first, each once. */
class Opened {
  private readonly closers: (() => unknown)[] = [];

  add<T>(thing: T, close: (thing: T) => unknown): T {
    this.closers.push(() => close(thing));
    return thing;
  }

  get size(): number {
    return this.closers.length;
  }

  /** Closes all but the first `keep` things opened; every one is closed even if another's close throws. */
  async close(keep = 0): Promise<void> {
    let failure: { error: unknown } | null = null;
    while (this.closers.length > keep) {
      try {
        await this.closers.pop()!();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}

/** The flags that cannot go together, checked before anything is opened; the results file a resumed run continues. */
function checkRunFlags(spec: SessionSpec): string | undefined {
  if (spec.load && spec.resume) {
    throw new JoulebenchError('E_USAGE', '--resume cannot continue a load run (--request-rate): its schedule and timings would not be one run; start it again');
  }
  if (spec.load && (spec.concurrency ?? 1) > 1) {
    throw new JoulebenchError('E_USAGE', '--concurrency is the closed-loop mode; with --request-rate cap requests in flight with --max-concurrency');
  }
  if (spec.resume === true && !spec.results) {
    throw new JoulebenchError('E_USAGE', '--resume needs the results file to continue: --resume FILE or --results FILE --resume');
  }
  const resumeFrom = spec.resume === true ? spec.results : spec.resume || undefined;
  if (resumeFrom && spec.results && resumeFrom !== spec.results) {
    throw new JoulebenchError('E_USAGE', `--resume ${resumeFrom} and --results ${spec.results} name different files`);
  }
  return resumeFrom;
}

/** A FIFO, socket or device at an output path would block the first open (and a signal handler with it). */
function checkOutputPaths(paths: { report?: string | undefined; results?: string | undefined; receipt?: string | undefined }): void {
  if (paths.report) checkWritePath(paths.report, '--out');
  if (paths.results) checkWritePath(paths.results, '--results');
  if (paths.receipt) checkWritePath(paths.receipt, '--receipt');
}

/**
 * The `judge:` block a suite with judged cases (`scorer: judge`, per suite or case) needs, and the file
 * that holds it; without one, judged cases stay unscored and the caller is told how to score them later.
 */
function judgeBlockFor(suite: Suite | StreamedSuite, cfg: LoadedConfig | null, hooks: SessionHooks): { block: JudgeConfig; where: string } | null {
  const judged = suite.scorer === 'judge' || (isStreamed(suite) ? suite.judged : suite.cases.some((c) => c.scorer === 'judge'));
  if (!judged) return null;
  const block = cfg?.config.judge;
  if (!block) {
    hooks.onWarning?.('this suite is scored by a judge and the config has no judge: block; judged cases are recorded unscored (score them later with joulebench rescore RESULTS --judge CONFIG)');
    return null;
  }
  if (block.mode === 'pairwise') {
    throw new JoulebenchError(
      'E_CONFIG',
      `${cfg.path}: judge.mode pairwise compares two runs' answers: run each arm, then joulebench rescore A.results.jsonl --against B.results.jsonl --judge CONFIG`,
    );
  }
  return { block, where: cfg.path };
}

/** The run's idle and suite-window figures, for re-aggregating the judged results exactly as the run did. */
function reportEnergy(outcome: RunOutcome): ReportContext['energy'] {
  const w = outcome.energy.suite;
  return { idle: outcome.energy.idle, suite: outcome.energy.gross_from === 'suite-window' && w ? toSuiteWindow(w) : null };
}

/** True when the run had cases and every one failed at the target (the CLI exits 1 for it). */
export function everyCaseFailed(report: BenchReport): boolean {
  return report.case_count > 0 && report.error_count === report.case_count;
}

/**
 * The warmup default: one pass for the cascade, whose cache the seed means to be warm; none for other
 * targets (a warmup pass bills every question twice, and a prefix-caching server would report cached TTFT).
 */
export function defaultWarmup(kind: string): number {
  return kind === 'cascade' ? 1 : 0;
}

/** The suite a session runs, its selection applied: streamed from its file where it can be. */
function sessionSuite(spec: SessionSpec, cfg: LoadedConfig | null): Suite | StreamedSuite {
  const dataset = spec.load?.dataset;
  if (dataset) {
    if (spec.load?.num_requests === undefined) throw new JoulebenchError('E_USAGE', '--dataset needs --num-requests (one prompt per request)');
    return datasetSuite(dataset, spec.load.num_requests, spec.load.seed, spec.load.think_time_ms !== undefined);
  }
  const selection = { ...(spec.filter !== undefined ? { filter: spec.filter } : {}), ...(spec.limit !== undefined ? { limit: spec.limit } : {}) };
  // A JSONL suite file and MMLU data stream (checked and digested first, then read once per pass), except for a load
  // run (its schedule draws from the cases in memory) and a judged suite (the judge needs the cases).
  const built = buildSuite(spec, cfg, spec.load ? undefined : { selection });
  const suite: Suite | StreamedSuite = isStreamed(built) ? built : selectCases(built, selection);
  return isStreamed(suite) && suite.judged ? selectCases(buildSuite(spec, cfg), selection) : suite;
}

/** The `suite_digest` a session with this spec would write in its header, without running it. */
export function sessionSuiteDigest(spec: SessionSpec): string {
  const suite = sessionSuite(spec, configOf(spec.config));
  return isStreamed(suite) ? suite.digest : suiteDigest(suite);
}

function configOf(config: SessionSpec['config']): LoadedConfig | null {
  if (config === undefined) return null;
  return typeof config === 'string' ? loadConfig(config) : parseConfig(config.config ?? {}, config.where);
}

/**
 * Checks a session spec without running a case: config, suite, grid intensity, flags, output paths, the
 * target's settings and the meter (it must read here). A sweep checks every arm so before the first runs.
 */
export async function checkSession(spec: SessionSpec, env: NodeJS.ProcessEnv = process.env, opts: { here?: boolean; suite?: boolean } = {}): Promise<void> {
  const cfg = configOf(spec.config);
  // The suite with this config's params (a JSONL suite is checked in one streamed pass, not held).
  if (opts.suite !== false) {
    const selection = { ...(spec.filter !== undefined ? { filter: spec.filter } : {}), ...(spec.limit !== undefined ? { limit: spec.limit } : {}) };
    if (!spec.load?.dataset) buildSuite(spec, cfg, spec.load ? undefined : { selection });
  }
  if (spec.grid_intensity !== undefined) parseGridIntensity(spec.grid_intensity);
  checkRunFlags(spec);
  const target = datasetTarget(withTargetOptions(buildTargetSpec(spec, cfg, env), spec.target_options), spec);
  checkOutputPaths({ report: spec.out, results: spec.results, receipt: spec.receipt });
  // Run elsewhere (a queue worker): the target and the meter are that machine's to check.
  if (opts.here === false) return;
  await checkTarget(target);
  const meter = await createMeter(spec.meter ?? 'auto', spec.meter_options ?? {});
  try {
    const probe = await meter.probe();
    if (!probe.available) throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  } finally {
    await meter.close?.();
  }
}

/** Results and receipt go next to the report; without one, under ./.joulebench/runs/. */
function outputPaths(spec: SessionSpec, suiteName: string, started: Date): SessionPaths {
  let base: string;
  if (spec.out) {
    base = join(dirname(spec.out), basename(spec.out).replace(/\.json$/i, ''));
  } else {
    const stamp = started.toISOString().replace(/[:.]/g, '-');
    base = join('.joulebench', 'runs', `${suiteName.replace(/[^A-Za-z0-9._-]+/g, '_')}-${stamp}`);
  }
  return {
    ...(spec.out ? { report: spec.out } : {}),
    results: spec.results ?? `${base}.results.jsonl`,
    receipt: spec.receipt ?? `${base}.receipt.json`,
  };
}

/** A results file about to be rewritten must hold no interrupted run and be a results file; a finished run's is replaced. */
function refuseToClobber(path: string): void {
  if (!existsSync(path)) return;
  let cases = 0;
  let ended = false;
  try {
    ({ cases, ended } = resultsFileState(path));
  } catch {
    throw new JoulebenchError('E_USAGE', `${path} exists and is not a joulebench results file: choose another --results path (nothing was written)`);
  }
  if (cases > 0 && !ended) {
    throw new JoulebenchError(
      'E_USAGE',
      `${path} holds an interrupted run (${cases} finished cases): continue it with --resume ${path}, or pass --overwrite to start afresh`,
    );
  }
}

/** An interrupted run's results file, indexed for resuming (resume-index.ts); a missing file is an error. */
function readForResume(path: string, count: number): ResumeFile & { path: string } {
  if (!existsSync(path)) throw new JoulebenchError('E_RESULTS', `${path}: no such file to resume`);
  return { ...readResumeFile(path, count), path };
}

/** Records the run in the history; a history that cannot be written is a warning, never a lost run. */
async function recordHistory(
  dbPath: string,
  input: { report: object; receipt: object; config_digest: string; paths: SessionPaths },
  hooks: SessionHooks,
): Promise<number | null> {
  const entry: HistoryInput = {
    report: input.report as Record<string, unknown>,
    receipt: input.receipt as Record<string, unknown>,
    config_digest: input.config_digest,
    paths: { report: input.paths.report ? resolve(input.paths.report) : null, results: resolve(input.paths.results), receipt: resolve(input.paths.receipt) },
  };
  try {
    return await History.recordOnce(entry, dbPath);
  } catch (e) {
    hooks.onWarning?.(`run not recorded in history: ${(e as Error).message.split('\n')[0]}`);
    return null;
  }
}

function writeEnsured(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** A load dataset asks an OpenAI-compatible server for exactly its output lengths: `max_tokens` (per case for ShareGPT) and `ignore_eos`. */
function datasetTarget(t: TargetSpec, spec: SessionSpec): TargetSpec {
  const d = spec.load?.dataset;
  if (!d) return t;
  if (t.kind !== 'openai') throw new JoulebenchError('E_USAGE', `--dataset applies to --target openai (an OpenAI-compatible server), not "${t.kind}"`);
  if (spec.maxTokens !== undefined) throw new JoulebenchError('E_USAGE', '--dataset sets max_tokens (--output-len, or each ShareGPT reply\'s length): drop --max-tokens');
  return { ...t, ...(d.kind === 'random' ? { max_tokens: d.output_len } : {}), ignore_eos: true };
}

/**
 * Where a session's prompts are kept: `none` with `--no-store-prompts`; `index` for a closed-loop run of a
 * bundled suite (read back from it by digest: src/report/case-prompts.ts); else `text`, in the case lines
 * (MMLU's digest covers its ids, not its question text, so it is not read back).
 */
function promptStorage(spec: SessionSpec): PromptStorage {
  if (spec.store_prompts === false) return 'none';
  return !spec.load && isBundledSuite(spec.suite) ? 'index' : 'text';
}

/** The results file as a session writes it: the header names where the suite can be read again; every record also goes to `onRecord`. */
function sessionSink(file: ResultsSink, source: SuiteSourceFields, onRecord?: (record: Record<string, unknown>) => void): ResultsSink {
  return {
    header(h) {
      const header = { ...h, ...source };
      file.header(header);
      onRecord?.(header as unknown as Record<string, unknown>);
    },
    write(r, now_ms) {
      file.write(r, now_ms);
      onRecord?.(r as unknown as Record<string, unknown>);
    },
    note(line) {
      file.note?.(line);
      onRecord?.(line);
    },
    flush: () => file.flush?.(),
    close: () => file.close(),
  };
}
