import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { createMeter } from '../../meters/registry.js';
import { defaultHistoryPath, History, type HistoryInput } from '../../report/history.js';
import { buildReceipt } from '../../report/receipt.js';
import { reportWarnings } from '../../report/run-warnings.js';
import { renderReportTable } from '../../report/table.js';
import { DEFAULT_MAX_ERRORS, run } from '../../runner/run.js';
import { firstErrorLine } from '../../report/run-warnings.js';
import { JsonlResultsFile, readResultsFile, truncateResultsFile, type ResultsFileContents } from '../../runner/results-file.js';
import { loadConfig } from '../../config/load.js';
import { mmluMeasurements } from '../../core/measurements.js';
import { createTarget, TARGETS } from '../../targets/registry.js';
import { writeFileEnsured, type CliIO } from '../io.js';
import { addMeterFlags, idleMsFrom, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';
import { intAtLeast } from '../options.js';
import { createProgress } from '../progress.js';
import { buildSuite, buildTargetSpec, type TargetFlags } from '../run-setup.js';

export interface RunFlags extends TargetFlags, MeterFlags {
  config?: string;
  concurrency: number;
  /** Absent: 1 for the cascade (its cache is meant to be warm), 0 for other targets (a paid endpoint would bill every question twice). */
  warmup?: number;
  repeat: number;
  out?: string;
  results?: string;
  receipt?: string;
  quiet?: boolean;
  /** `--resume [file]`: true (use --results) or the results file to continue. */
  resume?: boolean | string;
  overwrite?: boolean;
  /** False with `--no-history`. */
  history: boolean;
  /** `--max-errors N`: consecutive target failures that stop the run; 0 never stops. */
  maxErrors?: number;
}

export function runCommand(io: CliIO): Command {
  const cmd = new Command('run')
    .description('run a suite against a target and report accuracy, joules per correct answer, latency and stage mix')
    .option('-s, --suite <name|file>', 'bundled suite (mt, router, all), mmlu (with --data), or a suite file (.json, .jsonl, .yaml)', 'all')
    .addOption(new Option('-t, --target <kind>', 'the system under test (default: the config\'s target.kind, else cascade)').choices(Object.keys(TARGETS)))
    .addOption(new Option('--neural <kind>', "the cascade's neural backend (default: echo)").choices(Object.keys(TARGETS)))
    .option('-c, --config <file>', 'run config (YAML): target, params (subjects, limit, retry), prices, timeouts')
    .option('--endpoint <url>', 'OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (openai target)')
    .option('--model <name>', 'model name for a model-serving target (openai, ollama; also as the cascade\'s --neural)')
    .option('--credentials-ref <env:NAME>', 'read the API key from this environment variable (openai target)')
    .option('--answers <file>', 'recorded answers: a results JSONL or a fixture of {id, answer} (replay target)')
    .option('--data <path>', 'MMLU questions: JSON/JSONL rows, a Hendrycks CSV, or a directory of them (--suite mmlu)')
    .option('--concurrency <n>', 'cases in flight at once; above 1 energy attribution is "shared"', intAtLeast(1), 1)
    .option('-w, --warmup <n>', 'passes run first, recorded with phase "warmup", never scored (default: 1 for the cascade, 0 for other targets)', intAtLeast(0))
    .option('-r, --repeat <n>', 'scored passes over the suite', intAtLeast(1), 1)
    .option('-o, --out <file>', 'write the report JSON here (default: stdout, with the table on stderr)')
    .option('--results <file>', 'results JSONL, one line per case as it finishes (default: next to the report)')
    .option('--receipt <file>', 'receipt JSON: host, versions, UTC times, digests (default: next to the report)')
    .option('--resume [results]', 'continue an interrupted run from its results JSONL (default: the --results file)')
    .option('--overwrite', 'start afresh even if --results names an interrupted run (its finished cases are lost)')
    .option('--no-history', 'do not record this run in the history database ($JOULEBENCH_HOME/history.sqlite)')
    .option('-q, --quiet', 'no progress bar and no table')
    .option('--max-errors <n>', 'stop after this many cases in a row fail at the target (exit 1, finished cases kept); 0 never stops', intAtLeast(0), DEFAULT_MAX_ERRORS)
    // --- model-server flags (issue 5: ollama); they go to the target, or to the cascade's neural backend ---
    .option('--base-url <url>', 'server address for a model-serving target (ollama: default http://127.0.0.1:11434)');
  return addMeterFlags(cmd).action(async (flags: RunFlags) => {
    await runAction(flags, io);
  });
}

export async function runAction(flags: RunFlags, io: CliIO): Promise<void> {
  const started = new Date();
  const cfg = flags.config ? loadConfig(flags.config) : null;
  const suite = buildSuite(flags, cfg);
  const spec = buildTargetSpec(flags, cfg, process.env);
  const target = await createTarget(spec);
  const warmup = flags.warmup ?? defaultWarmup(spec.kind);
  const meter = await createMeter(flags.meter ?? 'auto', meterOptionsFrom(flags, process.env));
  const probe = await meter.probe();
  if (!probe.available) {
    throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  }

  const resumeFrom = flags.resume === true ? flags.results : flags.resume || undefined;
  if (flags.resume === true && !flags.results) {
    throw new JoulebenchError('E_USAGE', '--resume needs the results file to continue: --resume FILE or --results FILE --resume');
  }
  if (resumeFrom && flags.results && resumeFrom !== flags.results) {
    throw new JoulebenchError('E_USAGE', `--resume ${resumeFrom} and --results ${flags.results} name different files`);
  }
  const paths = outputPaths({ ...flags, ...(resumeFrom ? { results: resumeFrom } : {}) }, suite.name, started);
  const resume = resumeFrom ? readForResume(resumeFrom) : undefined;
  if (!resume && !flags.overwrite) refuseToClobber(paths.results);
  const sink = new JsonlResultsFile(paths.results, { append: resume !== undefined });
  // Ctrl-C or a polite kill: write what is buffered, then stop; every finished case stays on disk.
  const onSignal = (signal: NodeJS.Signals) => {
    sink.close();
    io.err(`\njoulebench: stopped by ${signal}; finished cases are in ${paths.results} (continue with --resume ${paths.results})\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const progress = flags.quiet ? null : createProgress(io, (warmup + flags.repeat) * suite.cases.length);
  let outcome;
  try {
    outcome = await run({
      suite,
      target,
      meter,
      warmup,
      repeats: flags.repeat,
      concurrency: flags.concurrency,
      sink,
      ...(resume ? { resume } : {}),
      idle_ms: idleMsFrom(flags),
      // MMLU's measurements are computed from the results afterwards (at most ~14k cases); others stream.
      keepResults: flags.suite === 'mmlu',
      onResult: progress ? (_r, p) => progress.update(p.done) : undefined,
      max_errors: flags.maxErrors ?? DEFAULT_MAX_ERRORS,
      // Each kind of failure is shown once, as it happens, with its cause (quiet or not).
      onFirstError: (r) => io.err(`${progress ? '\n' : ''}joulebench: ${firstErrorLine(r)}\n`),
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress?.stop();
    sink.close();
    await target.close?.();
    await meter.close?.();
  }
  const finished = new Date();

  // MMLU's seed-003 measurements (with class and official flags) ride along as an extra block.
  const block =
    flags.suite === 'mmlu'
      ? mmluMeasurements(outcome.results, { retry_enabled: Boolean(cfg?.config.params?.retry), prices_set: Boolean(cfg?.config.prices) })
      : null;
  const report = block ? { ...outcome.report, measurements: block.measurements, measurement_warnings: block.warnings } : outcome.report;
  for (const w of block?.warnings ?? []) io.err(`joulebench: warning: ${w}\n`);
  const reportJson = prettyJson(report);
  const receipt = buildReceipt({
    started,
    finished,
    argv: process.argv.slice(2),
    extra: {
      suite: { name: suite.name, version: suite.version, digest: outcome.header.suite_digest, source: suite.source, cases: suite.cases.length },
      config_digest: outcome.header.config_digest,
      target: target.describe(),
      meter: { id: meter.id, probe, ...meter.describe() },
      energy: {
        idle: outcome.energy.idle,
        suite_window: outcome.energy.suite,
        gross_from: outcome.energy.gross_from,
      },
      files: { report: paths.report ?? '(stdout)', results: paths.results },
      ...(resume ? { resumed: { from: paths.results, finished_before: resume.results.length, torn_bytes_dropped: resume.torn_bytes } } : {}),
    },
  });
  writeFileEnsured(paths.receipt, prettyJson(receipt));
  const runId = flags.history
    ? await recordHistory(io, { report, receipt, config_digest: outcome.header.config_digest, paths })
    : null;

  if (flags.out) {
    writeFileEnsured(flags.out, reportJson);
    if (!flags.quiet) io.out(renderReportTable(outcome.report));
  } else {
    io.out(reportJson);
    if (!flags.quiet) io.err(renderReportTable(outcome.report));
  }
  // Meter warnings (a dropped RAPL sample, a failed read) always reach a person, quiet or not.
  for (const w of outcome.energy.suite?.warnings ?? []) io.err(`joulebench: warning: ${w}\n`);
  // MMLU's measurement block already says why mmlu.cost_usd is missing.
  for (const w of reportWarnings(outcome.report)) if (!block?.warnings.some((b) => b.includes('cost_usd'))) io.err(`joulebench: warning: ${w}\n`);
  if (!flags.quiet) {
    io.err(
      `results ${paths.results}\nreceipt ${paths.receipt}\n${flags.out ? `report  ${flags.out}\n` : ''}${runId !== null ? `history #${runId}\n` : ''}`,
    );
  }
  if (outcome.report.case_count > 0 && outcome.report.error_count === outcome.report.case_count) {
    throw new JoulebenchError('E_RUN', `every case failed at the target (first error in ${paths.results})`);
  }
}

/**
 * The warmup default: one pass for the cascade, whose cache the seed means to be warm (and whose
 * passes cost nothing); none for other targets, where a warmup pass bills every question twice and,
 * on a prefix-caching server, turns the scored TTFT into seed 004's cached-prefix number.
 */
export function defaultWarmup(kind: string): number {
  return kind === 'cascade' ? 1 : 0;
}

/** Results and receipt go next to the report; without `--out`, under ./.joulebench/runs/. */
function outputPaths(flags: RunFlags, suiteName: string, started: Date): { report?: string; results: string; receipt: string } {
  let base: string;
  if (flags.out) {
    base = join(dirname(flags.out), basename(flags.out).replace(/\.json$/i, ''));
  } else {
    const stamp = started.toISOString().replace(/[:.]/g, '-');
    base = join('.joulebench', 'runs', `${suiteName.replace(/[^A-Za-z0-9._-]+/g, '_')}-${stamp}`);
  }
  return {
    ...(flags.out ? { report: flags.out } : {}),
    results: flags.results ?? `${base}.results.jsonl`,
    receipt: flags.receipt ?? `${base}.receipt.json`,
  };
}

/**
 * A results file about to be rewritten must not hold work that would be lost: an interrupted run
 * (case lines, no `end` record) is continued with --resume, and a file that is not a results file at
 * all is someone else's. A finished run's file is replaced, like its report.
 */
function refuseToClobber(path: string): void {
  if (!existsSync(path)) return;
  let contents: ResultsFileContents;
  try {
    contents = readResultsFile(path);
  } catch {
    throw new JoulebenchError('E_USAGE', `${path} exists and is not a joulebench results file: choose another --results path (nothing was written)`);
  }
  const ended = contents.other.some((o) => o.record === 'end');
  if (contents.results.length > 0 && !ended) {
    throw new JoulebenchError(
      'E_USAGE',
      `${path} holds an interrupted run (${contents.results.length} finished cases): continue it with --resume ${path}, or pass --overwrite to start afresh`,
    );
  }
}

/**
 * Reads an interrupted run's results for `--resume`. A torn last line (SIGKILL mid-write) is cut off the
 * file so the appended lines start clean; a missing file is an error (nothing to continue).
 */
function readForResume(path: string): ResultsFileContents & { path: string } {
  if (!existsSync(path)) throw new JoulebenchError('E_RESULTS', `${path}: no such file to resume`);
  const contents = readResultsFile(path);
  if (contents.torn_bytes > 0) truncateResultsFile(path, contents.good_bytes);
  return { ...contents, path };
}

/** Records the run in the history; a history that cannot be written is a warning, never a lost run. */
async function recordHistory(io: CliIO, input: { report: object; receipt: object; config_digest: string; paths: { report?: string; results: string; receipt: string } }): Promise<number | null> {
  const entry: HistoryInput = {
    report: input.report as Record<string, unknown>,
    receipt: input.receipt as Record<string, unknown>,
    config_digest: input.config_digest,
    paths: { report: input.paths.report ? resolve(input.paths.report) : null, results: resolve(input.paths.results), receipt: resolve(input.paths.receipt) },
  };
  try {
    const h = await History.open(defaultHistoryPath());
    try {
      return h.record(entry);
    } finally {
      h.close();
    }
  } catch (e) {
    io.err(`warning: run not recorded in history: ${(e as Error).message.split('\n')[0]}\n`);
    return null;
  }
}
