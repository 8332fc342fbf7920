import { addPriceFlags, pricesOfFlags, type PriceFlags } from '../price-flags.js';
import { dirname } from 'node:path';
import { Command, Option } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { MAX_CASE_LIMIT, MAX_CONCURRENCY, MAX_REPEAT, MAX_TOKENS, MAX_WARMUP } from '../../core/bounds.js';
import { renderReportTable } from '../../report/table.js';
import { firstErrorLine } from '../../report/run-warnings.js';
import { DEFAULT_MAX_ERRORS } from '../../runner/run.js';
import { everyCaseFailed, runSession } from '../../session/run-session.js';
import type { TargetFlags } from '../../session/setup.js';
import type { SessionSpec } from '../../session/spec.js';
import { neuralStageLine } from '../../targets/llamacpp/default-model.js';
import { TARGETS } from '../../targets/registry.js';
import type { CliIO } from '../io.js';
import { checkOutputPath, formatOf, writeOutputFile } from '../output-file.js';
import { ALL_FORMATS, planOutput, sideFileBase, writeByExtension, type Renderings } from '../outputs.js';
import type { BenchReport } from '../../core/aggregate.js';
import type { CaseResult } from '../../core/types.js';
import { forEachScoredBatch } from '../../runner/scored-batches.js';
import { HTML_CASE_ROWS } from '../../report/page-limits.js';
import { addMeterFlags, idleMsFrom, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';
import { intAtLeast, numberInRange, UNIT_LIMIT_HELP, unitLimit } from '../options.js';
import { DEFAULT_BOOTSTRAP_MAX_UNITS } from '../../stats/bootstrap.js';
import { createProgress } from '../progress.js';
import { addLoadFlags, loadOptionsFrom, strayDatasetFlag, strayLoadFlag, type LoadFlags } from '../load-flags.js';
import type { LoadBlock } from '../../load/block.js';
import { rateCurve } from '../../load/curve.js';
import { POWER_LIMITS_FORMAT, RATE_SWEEP_FORMAT, relativeTo, type PowerLimitsDoc, type RateSweepDoc } from '../../load/sweep-file.js';
import { openPowerLimiter, restoreOnExit, underLimit } from '../../meters/nvml/power-limit.js';
import { gpuLibrary, powerLimitList } from './infer.js';
import { loadInputsForCli } from '../load-runs.js';
import { rateLabel } from '../../load/options.js';
import { renderCurveTable, renderLoadTable, renderRepeatsTable, renderSearchTable } from '../../load/table.js';
import { LOAD_REPEATS_FORMAT, REPEATS_LEVEL, repeatSummary, type LoadRepeatsDoc } from '../../load/repeats.js';
import { addJudgeFlags } from '../judge-flags.js';
import { nextRate, RATE_SEARCH_FORMAT, searchStep, stoppingRule, type RateSearch, type RateSearchRule, type RateSearchStep } from '../../load/search.js';
import type { JudgeFlags } from '../../session/judge-setup.js';

/** The flags named as in the session spec; the rest are `run`'s own (or spelt differently in the spec). */
type SpecFlags = Pick<
  SessionSpec,
  'concurrency' | 'warmup' | 'repeat' | 'limit' | 'filter' | 'bootstrap' | 'cluster' | 'pue' | 'out' | 'results' | 'receipt' | 'resume' | 'overwrite'
>;

interface RunFlags extends TargetFlags, MeterFlags, Partial<LoadFlags>, JudgeFlags, PriceFlags, SpecFlags {
  config?: string;
  /** `--bootstrap-max-units N|inf` (absent: the default limit). */
  bootstrapMaxUnits?: number | 'inf';
  powerTrace?: string;
  /** `--gpu-power-limits 200,250`: one load run per limit, W. */
  gpuPowerLimits?: number[];
  /** Written into the receipt (a power-limit arm's limit); no flag sets it. */
  labels?: Record<string, string>;
  quiet?: boolean;
  /** False with `--no-history`. */
  history: boolean;
  /** False with `--no-store-prompts`. */
  storePrompts?: boolean;
  /** `--max-errors N`: consecutive target failures that stop the run; 0 never stops. */
  maxErrors?: number;
  /** `--grid-intensity G|REGION`: adds gCO2e per correct answer from net energy. */
  gridIntensity?: string;
}

/** What `run` waits with between the runs of a rate sweep or of `--runs` (tests inject their own). */
interface RunDeps {
  wait?: (seconds: number) => Promise<void>;
}

const sleepS = (seconds: number): Promise<void> => new Promise((r) => setTimeout(r, seconds * 1000));

export function runCommand(io: CliIO, deps: RunDeps = {}): Command {
  const cmd = new Command('run')
    .description('run a suite against a target and report accuracy, joules per correct answer, latency and stage mix')
    .option('-s, --suite <name|file>', 'bundled suite (mt, router, router-250, all), mmlu (a bundled 24-question sample, or --data), mt-bench (with --data), or a suite file (.json, .jsonl, .yaml)', 'all')
    .addOption(new Option('-t, --target <kind>', 'the system under test (default: the config\'s target.kind, else cascade)').choices(Object.keys(TARGETS)))
    .addOption(new Option('--neural <kind>', "the cascade's neural backend (default: echo)").choices(Object.keys(TARGETS)))
    .option('-c, --config <file>', 'run config (YAML): target (any --target kind, or mode: mock), params (subjects, limit, retry), prices, timeouts, judge')
    .option('--endpoint <url>', 'OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (openai target; default: the config\'s, else env OPENAI_BASE_URL, else https://api.openai.com/v1)')
    .option('--model <name>', 'model name for a model-serving target (openai, ollama; also as the cascade\'s --neural)')
    .option('--credentials-ref <env:NAME>', 'read the API key from this environment variable (openai target; default: the config\'s, else env:OPENAI_API_KEY when set); the key is never written')
    .option('--answers <file>', 'recorded answers: a results JSONL or a fixture of {id, answer} (replay target)')
    .option('--data <path>', 'MMLU questions: JSON/JSONL rows, a Hendrycks CSV, or a directory of them (--suite mmlu; default: the bundled sample); MT-Bench question.jsonl (--suite mt-bench); a ShareGPT JSON file (--dataset sharegpt)')
    .option('--references <file>', "MT-Bench reference answers in FastChat's form (--suite mt-bench)")
    .option('--concurrency <n>', `cases in flight at once, at most ${MAX_CONCURRENCY}; above 1 energy attribution is "shared"`, intAtLeast(1, MAX_CONCURRENCY), 1)
    .option('-w, --warmup <n>', `passes run first, recorded with phase "warmup", never scored, at most ${MAX_WARMUP} (default: 1 for the cascade, 0 for other targets)`, intAtLeast(0, MAX_WARMUP))
    .option('-r, --repeat <n>', `scored passes over the suite, at most ${MAX_REPEAT}`, intAtLeast(1, MAX_REPEAT), 1)
    .option('--filter <regex>', 'only cases whose id, a tag or the dataset matches (recorded in the suite digest)')
    .option('--limit <n>', 'only the first N cases, after --filter (recorded in the suite digest)', intAtLeast(1, MAX_CASE_LIMIT))
    .option('--bootstrap <n>', 'bootstrap resamples for the intervals in the report (0: off; Wilson still applies)', intAtLeast(0), 2000)
    .option('--bootstrap-max-units <n>', `${UNIT_LIMIT_HELP} (default: ${DEFAULT_BOOTSTRAP_MAX_UNITS})`, unitLimit)
    .addOption(new Option('--cluster <by>', 'resample clusters for the intervals, so correlated cases do not narrow them: question (a case with all its passes and turns; accuracy too) or subject (every case of one dataset, e.g. an MMLU subject)').choices(['question', 'subject']))
    .option('--pue <x>', "the facility's power usage effectiveness: adds a modelled facility layer, (PUE − 1) × the measured energy, never summed into a measured figure", numberInRange(1, 100))
    .option('--power-trace <file.csv>', 'write the power time series (t_utc, phase: idle/warmup/scored, and steady inside a load run\'s steady-state window; watts per domain) here; also embedded, downsampled, in the report; needs a hardware meter')
    .option('--gpu-power-limits <W,...>', 'load runs: one run per GPU power limit, set on every visible GPU through NVML (needs root) and restored after it, also on Ctrl-C; then J/output token and tok/s side by side', powerLimitList)
    .option('-o, --out <file>', 'write the report here; the extension picks the format: .json, .md, .html, .csv (per case), .jsonl (per case), .txt (default: JSON on stdout, the table on stderr)')
    .option('--results <file>', 'results JSONL, one line per case as it finishes (default: next to the report)')
    .option('--receipt <file>', 'receipt JSON: host, versions, UTC times, digests (default: next to the report)')
    .option('--resume [results]', 'continue an interrupted run from its results JSONL (default: the --results file)')
    .option('--overwrite', 'start afresh even if --results names an interrupted run (its finished cases are lost)')
    .option('--no-history', 'do not record this run in the history database ($JOULEBENCH_HOME/history.sqlite)')
    .option('--no-store-prompts', 'keep no prompt in the results file (private data); by default each case line keeps the prompt it was sent, or a bundled suite is read back by digest')
    .option('-q, --quiet', 'no progress bar and no table')
    .option('--max-errors <n>', 'stop after this many cases in a row fail at the target (exit 1, finished cases kept); 0 never stops', intAtLeast(0), DEFAULT_MAX_ERRORS)
    .option('--grid-intensity <G|REGION>', 'add gCO2e per correct answer from net energy: gCO2e/kWh, or a country code (FRA, USA, WOR…; docs/energy-sources.md)')
    // --- model-server flags (ollama); they go to the target, or to the cascade's neural backend ---
    .option('--base-url <url>', 'server address for a model-serving target (ollama: default http://127.0.0.1:11434)')
    // --- in-process model flags (llamacpp) ---
    .option('--model-path <file>', 'GGUF model file (llamacpp target, or --neural llamacpp)')
    .option('--threads <n>', 'llama.cpp evaluation threads (default: the physical cores this process may use that are idle when the model loads)', intAtLeast(1))
    .option('--ctx <n>', 'llama.cpp context size in tokens (default: min(model training context, 4096))', intAtLeast(1))
    .option('--gpu-layers <n>', 'layers offloaded to a GPU (default 0: CPU only)', intAtLeast(0))
    .option('--max-tokens <n>', 'tokens to generate at most (llamacpp default per suite: 16 multiple-choice, 64 router, 256 otherwise; openai 256)', intAtLeast(1, MAX_TOKENS));
  return addPriceFlags(addJudgeFlags(addLoadFlags(addMeterFlags(cmd)))).action(async (flags: RunFlags) => {
    const rates = flags.requestRate;
    const wait = deps.wait ?? sleepS;
    if (flags.runs !== undefined && rates && rates.length > 1) throw new JoulebenchError('E_USAGE', '--runs repeats one load run: give --request-rate one rate (repeat a rate sweep by running it again)');
    if (flags.maxRequestRate !== undefined && !flags.findMaxRate) throw new JoulebenchError('E_USAGE', '--max-request-rate applies to --find-max-rate only');
    if (flags.gpuPowerLimits) await powerLimitsAction(flags, flags.gpuPowerLimits, io, wait);
    else if (flags.findMaxRate) await findMaxRateAction(flags, io, wait);
    else if (flags.runs !== undefined && rates) await loadRepeatsAction(flags, flags.runs, io, wait);
    else if (rates && rates.length > 1) await rateSweepAction(flags, rates, io, wait);
    else await runAction(flags, io);
  });
}

async function runAction(flags: RunFlags, io: CliIO): Promise<{ accuracy_pct: number | null; load?: LoadBlock; out: string | null; results: string }> {
  // A bad output path or extension is refused before the run spends anything.
  const outPlan = flags.out ? planOutput(flags.out, ALL_FORMATS) : null;
  if (flags.results) checkOutputPath(flags.results, '--results');
  if (flags.receipt) checkOutputPath(flags.receipt, '--receipt');
  const aborter = new AbortController();
  let resultsPath: string | null = null;
  // Ctrl-C or a polite kill: the session writes what is buffered at once, then we stop; every finished case stays on disk.
  const onSignal = (signal: NodeJS.Signals) => {
    aborter.abort();
    if (resultsPath !== null) io.err(`\njoulebench: stopped by ${signal}; finished cases are in ${resultsPath} (continue with --resume ${resultsPath})\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  let progress: ReturnType<typeof createProgress> = null;
  const warnings: string[] = [];
  let session;
  try {
    // Installed after runSession's synchronous checks: nothing is written before them, so Ctrl-C there just exits.
    const pending = runSession(sessionSpecFrom(flags, process.env, outPlan), {
      signal: aborter.signal,
      onStart: ({ paths, total_cases }) => {
        resultsPath = paths.results;
        if (flags.out && outPlan && !outPlan.regular && !(flags.results && flags.receipt)) {
          io.err(`joulebench: ${flags.out} is not a regular file, so nothing is written beside it: results and receipt go to ${dirname(paths.results)}/\n`);
        }
        progress = flags.quiet ? null : createProgress(io, total_cases);
      },
      onResult: (_r, p) => progress?.update(p.done),
      onWarning: (w) => warnings.push(w),
      // Each kind of target failure is shown once, as it happens, with its cause (quiet or not).
      onFirstError: (r) => io.err(`${progress ? '\n' : ''}joulebench: ${firstErrorLine(r)}\n`),
    });
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    session = await pending;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    (progress as ReturnType<typeof createProgress>)?.stop();
  }
  const { report, paths, history_id: runId } = session;
  const neural = neuralStageLine((session.receipt.target ?? {}) as Record<string, unknown>, process.env);
  const load = (session.outcome.report as { load?: LoadBlock }).load;
  // The session's report: with a judge, the judged one (MT-Bench score and the judge's figures beside the SUT's).
  const table = (neural ? `${neural}\n` : '') + renderReportTable(session.report) + (load ? renderLoadTable(load) : '');
  if (flags.out && outPlan?.format !== 'json') {
    await writeByExtension(flags.out, runRenderings({ report, resultsPath: paths.results, receipt: session.receipt as unknown as Record<string, unknown>, label: session.suite.name }));
  }
  if (!flags.out) io.out(prettyJson(report));
  // The table (and CO2e line) go to stdout when the report went to a file, else to stderr beside the JSON.
  const say = (text: string): void => (flags.out ? io.out(text) : io.err(text));
  if (!flags.quiet) say(table);
  const c = report.co2e;
  if (c && !flags.quiet) {
    const range = c.grams_per_correct_range ? ` (range ${fmtGrams(c.grams_per_correct_range.low)}–${fmtGrams(c.grams_per_correct_range.high)})` : '';
    say(`CO2e / correct  ${c.grams_per_correct === null ? 'n/a' : fmtGrams(c.grams_per_correct)}${range} [${c.energy_source}, net] at ${c.intensity}\n`);
  }
  // Warnings (a dropped RAPL sample, a failed read, history not written) always reach a person, quiet or not.
  for (const w of warnings) io.err(`joulebench: warning: ${w}\n`);
  if (!flags.quiet) {
    io.err(
      `results ${paths.results}\nreceipt ${paths.receipt}\n${flags.out ? `report  ${flags.out}\n` : ''}${runId !== null ? `history #${runId}\n` : ''}`,
    );
  }
  if (everyCaseFailed(session.outcome.report)) {
    throw new JoulebenchError('E_RUN', `every case failed at the target (first error in ${paths.results})`);
  }
  return { accuracy_pct: report.accuracy_pct, ...(load ? { load } : {}), out: flags.out ?? paths.report ?? null, results: paths.results };
}

/** A finished load run of a series (rates, power limits, search steps, repeats). */
type LoadRun = { accuracy_pct: number | null; load: LoadBlock; out: string | null; results: string };

/**
 * Waits out the cooldown before run `i` of a series (none before the first), then returns that run, to start:
 * `changes` applied to the flags, each file named `NAME.<tag>.ext` so every run keeps its own, quiet, nothing on stdout.
 */
async function nextRun(flags: RunFlags, i: number, tag: string, changes: Partial<RunFlags>, io: CliIO, wait: (seconds: number) => Promise<void>) {
  if (i > 0 && (flags.cooldownS ?? 0) > 0) await wait(flags.cooldownS ?? 0);
  const one: RunFlags = { ...flags, ...changes, quiet: true };
  for (const k of ['out', 'results', 'receipt', 'powerTrace'] as const) {
    const p = flags[k]?.replace(/(\.[A-Za-z0-9]+)?$/, (ext) => `.${tag}${ext}`);
    if (p !== undefined) one[k] = p;
  }
  return () => runAction(one, { ...io, out: () => undefined });
}

/** A run of a series that must have written a load block (`what` names it in the error). */
function withLoad(r: Awaited<ReturnType<typeof runAction>>, what: string): LoadRun {
  if (!r.load) throw new JoulebenchError('E_RUN', `${what} wrote no load block (${r.results})`);
  return { ...r, load: r.load };
}

/**
 * A series' document on stdout and, with `-o FILE.json`, in that file (`rel`: with paths relative to it), or with
 * `-o FILE.html` the page `html` builds (a series with a page); then its table, naming that file.
 */
async function printSeries(flags: RunFlags, doc: object, rel: () => object, table: string, what: string, io: CliIO, html?: () => Promise<string>): Promise<void> {
  const format = flags.out === undefined ? null : formatOf(flags.out, ALL_FORMATS);
  const written = format === 'json' || (format === 'html' && html !== undefined);
  if (written) writeOutputFile(flags.out!, format === 'json' ? prettyJson(rel()) : await html!());
  io.out(prettyJson(doc));
  if (!flags.quiet) io.err(table + (written ? `${what} ${flags.out}\n` : ''));
}

/** `--request-rate 1,2,4,inf`: one load run per rate with a cooldown between, each with its own files, then the curve. */
async function rateSweepAction(flags: RunFlags, rates: number[], io: CliIO, wait: (seconds: number) => Promise<void>): Promise<void> {
  if (flags.out) planOutput(flags.out, ALL_FORMATS);
  const runs: LoadRun[] = [];
  for (const [i, rate] of rates.entries()) {
    const label = String(rateLabel(rate));
    const run = await nextRun(flags, i, `rate-${label}`, { requestRate: [rate] }, io, wait);
    if (!flags.quiet) io.err(`joulebench: rate ${label}/s (${i + 1} of ${rates.length})\n`);
    const r = await run();
    if (r.load) runs.push({ ...r, load: r.load });
  }
  const curve = rateCurve(runs);
  const doc: RateSweepDoc = { format: RATE_SWEEP_FORMAT, rates: rates.map(rateLabel), reports: runs.map((r) => r.out), results: runs.map((r) => r.results), curve };
  const html = async (): Promise<string> => {
    const [{ buildHtmlReport }, inputs] = await Promise.all([import('../../report/html/index.js'), loadInputsForCli(runs.map((r) => r.results), false)]);
    return buildHtmlReport(inputs);
  };
  await printSeries(flags, doc, () => relativeTo(doc, flags.out!), renderCurveTable(curve), 'rate sweep', io, html);
}

/**
 * `--request-rate R --gpu-power-limits W1,W2,…` (Zeus's power-limit arms): one load run per limit, `--cooldown-s`
 * apart, each with its own files (`NAME.pl-200W.json`), the limit set on every visible GPU before it and the
 * original restored after it (also on Ctrl-C); then each arm's curve point with its limit.
 */
async function powerLimitsAction(flags: RunFlags, limits: number[], io: CliIO, wait: (seconds: number) => Promise<void>): Promise<void> {
  const rates = flags.requestRate;
  if (!rates || rates.length !== 1) throw new JoulebenchError('E_USAGE', '--gpu-power-limits runs one load run per limit: give --request-rate one rate');
  if (flags.runs !== undefined || flags.findMaxRate) throw new JoulebenchError('E_USAGE', '--gpu-power-limits does not combine with --runs or --find-max-rate');
  if (flags.out) planOutput(flags.out, ALL_FORMATS);
  const limiter = await openPowerLimiter(limits, gpuLibrary(process.env));
  const unhook = restoreOnExit(limiter, (line) => io.err(`joulebench: ${line}\n`));
  const runs: LoadRun[] = [];
  try {
    for (const [i, w] of limits.entries()) {
      const run = await nextRun(flags, i, `pl-${w}W`, { labels: { gpu_power_limit_w: String(w) }, gpuPowerLimits: undefined }, io, wait);
      if (!flags.quiet) io.err(`joulebench: GPU power limit ${w} W (${i + 1} of ${limits.length})\n`);
      runs.push(withLoad(await underLimit(limiter, w, run), `the ${w} W arm`));
    }
  } finally {
    unhook();
    limiter.close();
  }
  const arms = rateCurve(runs).map((p, i) => ({ gpu_power_limit_w: limits[i]!, ...p, avg_power_w: runs[i]!.load.energy.avg_power_w }));
  const doc: PowerLimitsDoc = { format: POWER_LIMITS_FORMAT, request_rate: rateLabel(rates[0]!), gpu_power_limits_w: limits, gpus: limiter.describe(), reports: runs.map((r) => r.out), results: runs.map((r) => r.results), arms };
  const table = renderCurveTable(arms, { head: 'GPU limit W', cell: (p) => String(p.gpu_power_limit_w) });
  await printSeries(flags, doc, () => relativeTo(doc, flags.out!), table, 'power-limit arms', io);
}

/**
 * `--find-max-rate --slo …`: one load run per step (`NAME.step-K.json`, its own results and receipt), the rate
 * doubled, then bisected, until the highest rate whose goodput share meets the target is pinned (src/load/search.ts).
 */
async function findMaxRateAction(flags: RunFlags, io: CliIO, wait: (seconds: number) => Promise<void>): Promise<void> {
  if (!flags.slo) throw new JoulebenchError('E_USAGE', '--find-max-rate needs --slo (the objectives a good request meets)');
  if (flags.runs !== undefined) throw new JoulebenchError('E_USAGE', '--find-max-rate and --runs do not combine');
  if (flags.requestRate && flags.requestRate.length > 1) throw new JoulebenchError('E_USAGE', '--find-max-rate starts from one rate: give --request-rate one rate');
  const start = flags.requestRate?.[0] ?? 1;
  if (start === Infinity) throw new JoulebenchError('E_USAGE', '--find-max-rate needs a finite starting --request-rate');
  if (flags.out) planOutput(flags.out, ALL_FORMATS);
  const rule: RateSearchRule = { start_rate: start, goodput_target: flags.goodputTarget ?? 0.9, max_request_rate: flags.maxRequestRate ?? null };
  const steps: RateSearchStep[] = [];
  for (;;) {
    const next = nextRate(steps, rule);
    if ('done' in next) {
      const search: RateSearch = {
        slo: flags.slo,
        goodput_target: rule.goodput_target,
        start_rate: start,
        max_request_rate_cap: rule.max_request_rate,
        stopping_rule: stoppingRule(rule),
        steps,
        max_request_rate: next.max_request_rate,
        stopped: next.done,
      };
      const doc = { format: RATE_SEARCH_FORMAT, rate_search: search, reports: steps.map((s) => s.report), results: steps.map((s) => s.results) };
      const rel = () => {
        const r = relativeTo(doc, flags.out!);
        return { ...r, rate_search: { ...search, steps: steps.map((s, i) => ({ ...s, report: r.reports[i]!, results: r.results[i]! })) } };
      };
      await printSeries(flags, doc, rel, renderSearchTable(search), 'rate search', io);
      return;
    }
    const k = steps.length + 1;
    const run = await nextRun(flags, steps.length, `step-${k}`, { requestRate: [next.rate], findMaxRate: undefined }, io, wait);
    if (!flags.quiet) io.err(`joulebench: search step ${k}: ${next.rate}/s\n`);
    const r = withLoad(await run(), `search step ${k}`);
    steps.push(searchStep(k, r.load, rule.goodput_target, { report: r.out, results: r.results }));
  }
}

/**
 * `--request-rate R --runs N`: the same load run (same seed, so the same schedule and requests) N times,
 * `--cooldown-s` apart, each a whole run with its own report/results/receipt (`NAME.run-I.json`,
 * `NAME.run-I.results.jsonl`): each file rebuilds its own run, and a run that fails leaves the ones
 * before it whole. Then every serving figure over the runs (mean, sd, CV, Student-t interval).
 * `-o NAME.json` also writes the document there (what `compare` pairs run by run).
 */
async function loadRepeatsAction(flags: RunFlags, n: number, io: CliIO, wait: (seconds: number) => Promise<void>): Promise<void> {
  if (flags.out) planOutput(flags.out, ALL_FORMATS);
  const runs: LoadRun[] = [];
  for (let i = 0; i < n; i++) {
    const run = await nextRun(flags, i, `run-${String(i + 1).padStart(String(n).length, '0')}`, { runs: undefined }, io, wait);
    if (!flags.quiet) io.err(`joulebench: run ${i + 1} of ${n}\n`);
    runs.push(withLoad(await run(), `run ${i + 1} of ${n}`));
  }
  const { figures, notes } = repeatSummary(runs);
  const doc: LoadRepeatsDoc = {
    format: LOAD_REPEATS_FORMAT,
    request_rate: runs[0]!.load.request_rate,
    runs: n,
    cooldown_s: flags.cooldownS ?? 0,
    reports: runs.map((r) => r.out),
    results: runs.map((r) => r.results),
    level: REPEATS_LEVEL,
    figures,
    notes,
  };
  await printSeries(flags, doc, () => relativeTo(doc, flags.out!), renderRepeatsTable(doc), 'load runs', io);
}

/** The session spec `run`'s flags ask for (meter settings resolved from flags and environment here). */
function sessionSpecFrom(flags: RunFlags, env: NodeJS.ProcessEnv, outPlan: { format: string; regular: boolean } | null = null): SessionSpec {
  const spec: SessionSpec = {
    suite: flags.suite,
    meter: flags.meter ?? 'auto',
    meter_options: meterOptionsFrom(flags, env),
    idle_ms: idleMsFrom(flags),
    repeat: flags.repeat,
    bootstrap: flags.bootstrap,
    concurrency: flags.concurrency,
    argv: process.argv.slice(2),
  };
  // The flags given, under the spec's name for each: the same, or snake case.
  const alike = ['config', 'target', 'neural', 'endpoint', 'model', 'credentialsRef', 'answers', 'data', 'references', 'baseUrl', 'modelPath', 'threads', 'ctx', 'gpuLayers', 'maxTokens', 'warmup', 'filter', 'limit', 'out', 'results', 'receipt', 'resume', 'overwrite', 'judgePass', 'judgeCache', 'judgeMeter', 'judgePrompts', 'cluster', 'pue', 'labels'] as const;
  const snake = { bootstrapMaxUnits: 'bootstrap_max_units', powerTrace: 'power_trace', gridIntensity: 'grid_intensity', maxErrors: 'max_errors' } as const;
  for (const [flag, key] of [...alike.map((k) => [k, k]), ...Object.entries(snake)] as [keyof RunFlags, keyof SessionSpec][]) {
    if (flags[flag] !== undefined) (spec as unknown as Record<string, unknown>)[key] = flags[flag];
  }
  if (flags.judgeMeter !== undefined) spec.judgeMeterOptions = meterOptionsFrom(flags, env);
  if (flags.out && outPlan) {
    // The session writes the report as JSON; any other format is written by the CLI afterwards.
    if (outPlan.format !== 'json') delete spec.out;
    // Side files are named after the output whatever its extension, and never put beside a device.
    const base = sideFileBase(flags.out, outPlan.regular, flags.suite, new Date());
    if (flags.results === undefined && !flags.resume) spec.results = `${base}.results.jsonl`;
    if (flags.receipt === undefined) spec.receipt = `${base}.receipt.json`;
  }
  if (!flags.history) spec.history = false;
  if (flags.storePrompts === false) spec.store_prompts = false;
  const prices = pricesOfFlags(flags);
  if (prices) spec.prices = prices;
  const stray = strayLoadFlag(flags);
  if (stray) throw new JoulebenchError('E_USAGE', `${stray} applies to load runs only: add --request-rate`);
  const strayLen = strayDatasetFlag(flags);
  if (strayLen) throw new JoulebenchError('E_USAGE', `${strayLen} goes with --dataset ${strayLen === '--tokenizer' ? 'random or sharegpt' : 'random'}`);
  if (flags.requestRate?.length === 1) spec.load = loadOptionsFrom(flags as LoadFlags, flags.requestRate[0]!);
  return spec;
}

/** A finished run in every format `-o` offers; per-case formats stream the results file again rather than hold every case. */
function runRenderings(input: { report: BenchReport; resultsPath: string; receipt: Record<string, unknown>; label: string }): Renderings {
  const eachBatch = (each: (batch: CaseResult[]) => void): void => forEachScoredBatch(input.resultsPath, each);
  return {
    json: () => prettyJson(input.report),
    md: async () => (await import('../../report/markdown.js')).renderReportMarkdown(input.report, { title: `joulebench · ${input.label}`, receipt: input.receipt }),
    html: async () => {
      const { loadRuns } = await import('../../report/load-inputs.js');
      const cases = loadRuns([input.resultsPath], null, { cases: true, casesLimit: HTML_CASE_ROWS })[0]!;
      // The header too, so the page can show each case's prompt as `report FILE --html` does.
      const { results, scored_total, case_latency_ms, header } = cases;
      const run = { label: input.label, origin: input.resultsPath, report: input.report, results, scored_total, case_latency_ms, header, receipt: input.receipt, run_id: null };
      return (await import('../../report/html/index.js')).buildHtmlReport([run]);
    },
    csv: async () => {
      const { casesCsvHeader, casesCsvRows } = await import('../../report/csv.js');
      return {
        stream: (write) => {
          write(casesCsvHeader());
          eachBatch((batch) => write(casesCsvRows(input.label, batch)));
        },
      };
    },
    jsonl: () => ({ stream: (write) => eachBatch((batch) => write(batch.map((r) => JSON.stringify(r) + '\n').join(''))) }),
    txt: async () => (await import('../../report/table.js')).renderReportTable(input.report),
  };
}

/** Grams with enough digits for a per-answer figure (often well under a gram). */
function fmtGrams(g: number): string {
  return `${Number(g.toPrecision(3))} g`;
}
