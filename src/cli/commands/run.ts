import { basename, dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { createMeter } from '../../meters/registry.js';
import { buildReceipt } from '../../report/receipt.js';
import { renderReportTable } from '../../report/table.js';
import { run } from '../../runner/run.js';
import { JsonlResultsFile } from '../../runner/results-file.js';
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
  warmup: number;
  repeat: number;
  out?: string;
  results?: string;
  receipt?: string;
  quiet?: boolean;
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
    .option('-w, --warmup <n>', 'passes run first, recorded with phase "warmup", never scored', intAtLeast(0), 1)
    .option('-r, --repeat <n>', 'scored passes over the suite', intAtLeast(1), 1)
    .option('-o, --out <file>', 'write the report JSON here (default: stdout, with the table on stderr)')
    .option('--results <file>', 'results JSONL, one line per case as it finishes (default: next to the report)')
    .option('--receipt <file>', 'receipt JSON: host, versions, UTC times, digests (default: next to the report)')
    .option('-q, --quiet', 'no progress bar and no table')
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
  const target = await createTarget(buildTargetSpec(flags, cfg, process.env));
  const meter = await createMeter(flags.meter ?? 'auto', meterOptionsFrom(flags, process.env));
  const probe = await meter.probe();
  if (!probe.available) {
    throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  }

  const paths = outputPaths(flags, suite.name, started);
  const sink = new JsonlResultsFile(paths.results);
  // Ctrl-C or a polite kill: write what is buffered, then stop; every finished case stays on disk.
  const onSignal = (signal: NodeJS.Signals) => {
    sink.close();
    io.err(`\njoulebench: stopped by ${signal}; finished cases are in ${paths.results}\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const progress = flags.quiet ? null : createProgress(io, (flags.warmup + flags.repeat) * suite.cases.length);
  let outcome;
  try {
    outcome = await run({
      suite,
      target,
      meter,
      warmup: flags.warmup,
      repeats: flags.repeat,
      concurrency: flags.concurrency,
      sink,
      idle_ms: idleMsFrom(flags),
      // MMLU's measurements are computed from the results afterwards (at most ~14k cases); others stream.
      keepResults: flags.suite === 'mmlu',
      onResult: progress ? (_r, p) => progress.update(p.done) : undefined,
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
    },
  });
  writeFileEnsured(paths.receipt, prettyJson(receipt));

  if (flags.out) {
    writeFileEnsured(flags.out, reportJson);
    if (!flags.quiet) io.out(renderReportTable(outcome.report));
  } else {
    io.out(reportJson);
    if (!flags.quiet) io.err(renderReportTable(outcome.report));
  }
  // Meter warnings (a dropped RAPL sample, a failed read) always reach a person, quiet or not.
  for (const w of outcome.energy.suite?.warnings ?? []) io.err(`joulebench: warning: ${w}\n`);
  if (!flags.quiet) {
    io.err(`results ${paths.results}\nreceipt ${paths.receipt}\n${flags.out ? `report  ${flags.out}\n` : ''}`);
  }
  if (outcome.report.case_count > 0 && outcome.report.error_count === outcome.report.case_count) {
    throw new JoulebenchError('E_RUN', `every case failed at the target (first error in ${paths.results})`);
  }
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
