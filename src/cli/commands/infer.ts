import { addPriceFlags, pricesOfFlags, type PriceFlags } from '../price-flags.js';
import { readTextFile } from '../../read-text.js';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { prettyJson } from '../../core/canonical.js';
import { JoulebenchError } from '../../core/errors.js';
import { DEFAULT_GPU_SNAPSHOT_CMD, inferHostFacts, simdWidth } from '../../infer/host.js';
import { identityMismatch, InferJournal, journalPathFor, readJournal, writeFileAtomic, type JournalEvent, type JournalState } from '../../infer/journal.js';
import { readInferFile } from '../../infer/load.js';
import { inferIdentity, runInfer, type ArmTraces, type InferOptions } from '../../infer/protocol.js';
import { llamaInferIdentity, runInferLlamaCpp, type LlamaInferOptions } from '../../infer/llamacpp.js';
import { DEFAULT_INFER_PROMPT } from '../../infer/prompt.js';
import { defaultPeakFlops } from '../../infer/stats.js';
import { inferTableRows, renderInferTable } from '../../infer/table.js';
import type { InferRunFile } from '../../infer/protocol.js';
import type { MachinePeak, ThreadArm } from '../../infer/types.js';
import type { Meter } from '../../meters/meter.js';
import { createMeter, METERS } from '../../meters/registry.js';
import { openPowerLimiter, restoreOnExit, type PowerLimiter } from '../../meters/nvml/power-limit.js';
import { MAX_WATTS } from '../../core/bounds.js';
import { DEFAULT_OLLAMA_URL } from '../../targets/ollama/client.js';
import type { CliIO } from '../io.js';
import { addMeterReadFlags, meterOptionsFrom, type MeterFlags } from '../meter-flags.js';
import { formatsOf, planOutput, writeByExtension, type Renderings } from '../outputs.js';
import { checkOutputPath, writeOutputFile } from '../output-file.js';
import { DEFAULT_IDLE_MS } from '../../meters/idle.js';
import { round } from '../../core/stats.js';
import { intAtLeast, numberInRange, timerMs } from '../options.js';
import { recordForCli } from '../load-runs.js';
import { inferHistoryInput } from '../../report/history-inputs.js';
import { quote } from '../../core/one-line.js';

interface InferFlags extends Omit<MeterFlags, 'meter'>, PriceFlags {
  target: string;
  /** llamacpp: GGUF files, comma-separated. */
  modelPath?: string;
  gpuLayers?: number;
  model?: string;
  baseUrl: string;
  runs: number;
  warmup: number;
  cold: number;
  threads?: ThreadArm[];
  gpuPowerLimits?: number[];
  promptFile?: string;
  out?: string;
  report?: string[];
  numPredict: number;
  seed: number;
  temperature: number;
  numCtx?: number;
  meter: string;
  gpuSnapshotCmd: string;
  peakFlops?: number;
  unloadTimeoutMs: number;
  resume?: boolean;
  quiet?: boolean;
  /** Full table even when wider than the terminal. */
  wide?: boolean;
  json?: boolean;
  /** False with `--no-history`. */
  history?: boolean;
  pue?: number;
  powerTrace?: string;
}

export function inferCommand(io: CliIO): Command {
  const cmd = new Command('infer')
    .description('local inference under the local-inference counting rules (Ollama, llama.cpp): cold runs, warmup, scored runs, thread sweep, receipts')
    .addOption(new Option('-t, --target <kind>', 'the model server').choices(['ollama', 'llamacpp']).default('ollama'))
    .option('--model-path <files>', 'llamacpp: GGUF file(s), comma-separated; each × thread count is an arm')
    .option('--gpu-layers <n>', 'llamacpp: layers offloaded to a GPU (default 0: CPU only)', intAtLeast(0))
    .option('--model <names>', 'model name(s), comma-separated; each × thread count is an arm')
    .option('--base-url <url>', 'Ollama address', DEFAULT_OLLAMA_URL)
    .option('--runs <n>', 'scored runs per arm (decode = their median)', intAtLeast(1), 5)
    .option('--warmup <n>', 'warmup runs per arm, kept as warmup_discarded, never in a statistic', intAtLeast(0), 1)
    .option('--cold <n>', 'cold runs per arm, each after keep_alive 0 confirmed by /api/ps (true prefill)', intAtLeast(0), 3)
    .option('--threads <list>', 'the thread arms to run, and only these: counts and/or default (Ollama: its own choice; llamacpp: the physical cores this process may use that are idle when the model loads), e.g. default,4,8 (default: default)', threadList)
    .option('--gpu-power-limits <W,...>', 'GPU power-limit arms, W: every model × thread arm runs under each limit, set on every visible GPU through NVML (needs root) and restored after the arm, also on Ctrl-C', powerLimitList)
    .option('--prompt-file <file>', 'the frozen prompt (default: the built-in one); its sha256 goes in the file')
    .option('-o, --out <file>', 'run file (default: .joulebench/infer/<UTC stamp>.json); <out>.partial.jsonl journals each finished run until it is written')
    .option('--resume', 'continue the run whose journal is <out>.partial.jsonl: finished arms are kept, a half-finished arm re-runs from cold')
    .option('--report <files...>', 'print the table of arms of these run files and exit')
    .option('--num-predict <n>', 'tokens to decode per run', intAtLeast(1), 128)
    .option('--seed <n>', 'sampling seed', intAtLeast(0), 42)
    .option('--temperature <t>', 'sampling temperature', numberInRange(0, Infinity), 0)
    .option('--num-ctx, --ctx <n>', 'context window (Ollama num_ctx; llamacpp context size)', intAtLeast(1))
    .addOption(new Option('-m, --meter <name>', 'energy meter: auto = the hardware counters that read here (RAPL, NVML), else none: energy null, never an estimate of this process').choices([...new Set(['auto', 'none', ...Object.keys(METERS)])]).default('auto'))
    .option('--gpu-snapshot-cmd <cmd>', 'shell command whose output is the GPU snapshot compared before/after each arm ("" to skip)', DEFAULT_GPU_SNAPSHOT_CMD)
    .option('--peak-flops <flops>', 'machine peak FLOP/s for the prefill plausibility check (default: a CPU ceiling from cores and SIMD width)', numberInRange(0, Infinity, { exclusive: true }))
    .option('--unload-timeout-ms <ms>', 'how long to wait for a model to leave /api/ps after keep_alive 0', timerMs(1), 30_000)
    .option('--pue <x>', "the facility's power usage effectiveness: adds a modelled facility layer to each arm, (PUE − 1) × the measured energy, never summed into a measured figure", numberInRange(1, 100))
    .option('--power-trace <file.csv>', `write each arm's power time series (t_utc, arm, phase: idle ${DEFAULT_IDLE_MS} ms, warmup: cold and warmup runs, scored; watts per domain) here; also embedded, downsampled, in each arm; needs a hardware meter`)
    .option('--no-history', 'do not record this run in the history database ($JOULEBENCH_HOME/history.sqlite)')
    .option('-q, --quiet', 'no progress lines')
    .option('--wide', 'print the full table of arms even when it is wider than the terminal')
    .option('--json', 'print the run file (or with --report, the run files) as JSON instead of the table');
  return addPriceFlags(addMeterReadFlags(cmd)).action(async (flags: InferFlags) => {
    await inferAction(flags, io);
  });
}

async function inferAction(flags: InferFlags, io: CliIO): Promise<void> {
  if (flags.report) {
    if (flags.pue !== undefined || flags.powerTrace !== undefined) throw new JoulebenchError('E_USAGE', `${flags.pue !== undefined ? '--pue' : '--power-trace'} applies to a run, not to --report`);
    if (flags.out) planOutput(flags.out, formatsOf(inferRenderings([])));
    const files = flags.report.map((path) => ({ path, file: readInferFile(path) }));
    if (flags.out) await writeByExtension(flags.out, inferRenderings(files));
    else if (flags.json) io.out(inferRenderings(files).json());
    else io.out(renderInferTable(files, tableWidth(flags)));
    return;
  }
  const llama = flags.target === 'llamacpp';
  if (llama && flags.model) throw new JoulebenchError('E_USAGE', '--model names an Ollama model; --target llamacpp takes --model-path FILE.gguf');
  if (!llama && (flags.modelPath || flags.gpuLayers !== undefined)) throw new JoulebenchError('E_USAGE', '--model-path and --gpu-layers apply to --target llamacpp');
  const modelList = llama ? flags.modelPath : flags.model;
  if (!modelList) throw new JoulebenchError('E_USAGE', `${llama ? '--model-path' : '--model'}: required (or --report FILES to print run files)`);
  const models = modelList.split(',').map((m) => m.trim()).filter(Boolean);
  let prompt = DEFAULT_INFER_PROMPT;
  let prompt_source = 'built-in';
  if (flags.promptFile) {
    prompt = readTextFile(flags.promptFile, 'E_INPUT', { where: `--prompt-file ${flags.promptFile}` });
    if (prompt.trim() === '') throw new JoulebenchError('E_INPUT', `--prompt-file ${flags.promptFile}: the file is empty`);
    prompt_source = flags.promptFile;
  }
  if (flags.resume && !flags.out) throw new JoulebenchError('E_USAGE', '--resume: give the --out of the run to continue (its journal is <out>.partial.jsonl)');
  const host = inferHostFacts();
  const simd = simdWidth();
  const cpuDefault: MachinePeak = defaultPeakFlops(host.logical_cpus, simd.bits);
  cpuDefault.source += ` [SIMD width from ${simd.source}]`;
  const peak: MachinePeak | null = flags.peakFlops ? { flops: flags.peakFlops, source: 'configured (--peak-flops)' } : null;
  const started = new Date();
  const out = flags.out ?? join('.joulebench', 'infer', `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  const journalPath = journalPathFor(out);
  checkOutputPath(out, '--out');
  checkOutputPath(journalPath, '--out (its journal)');
  const base: InferOptions = {
    baseUrl: flags.baseUrl,
    models,
    threads: flags.threads ?? ['default'],
    runs: flags.runs,
    warmup: flags.warmup,
    cold: flags.cold,
    prompt,
    prompt_source,
    num_predict: flags.numPredict,
    seed: flags.seed,
    temperature: flags.temperature,
    ...(flags.numCtx !== undefined ? { num_ctx: flags.numCtx } : {}),
    ...(flags.gpuPowerLimits ? { gpu_power_limits_w: flags.gpuPowerLimits } : {}),
    meter: null,
    gpu_snapshot_cmd: flags.gpuSnapshotCmd.trim() === '' ? null : flags.gpuSnapshotCmd,
    ...(pricesOfFlags(flags) ? { prices: pricesOfFlags(flags)! } : {}),
    peak,
    cpu_default_peak: cpuDefault,
    unload_timeout_ms: flags.unloadTimeoutMs,
    host,
    argv: process.argv.slice(2),
    onProgress: flags.quiet ? undefined : (line) => io.err(`${line}\n`),
  };
  const llamaOpts: LlamaInferOptions | null = llama
    ? (({ baseUrl: _u, models: _m, unload_timeout_ms: _t, num_ctx: _c, ...rest }) => ({
        ...rest,
        model_paths: models,
        ...(flags.numCtx !== undefined ? { ctx: flags.numCtx } : {}),
        ...(flags.gpuLayers !== undefined ? { gpu_layers: flags.gpuLayers } : {}),
      }))(base)
    : null;
  const identity = llamaOpts ? llamaInferIdentity(llamaOpts) : inferIdentity(base);
  let resume: JournalState | undefined;
  if (flags.resume) {
    resume = readJournal(journalPath);
    const differs = identityMismatch(resume.identity, identity);
    if (differs) throw new JoulebenchError('E_USAGE', `--resume: ${journalPath} was written for a different run (${differs}); use another --out, or delete the journal to start over`);
  }
  if (flags.powerTrace !== undefined) checkOutputPath(flags.powerTrace, '--power-trace');
  const { meter, note } = await pickMeter(flags.meter, flags, llama);
  if (flags.powerTrace !== undefined && (!meter || meter.usesTargetEnergy || meter.source === 'estimate')) {
    await meter?.close?.();
    throw new JoulebenchError('E_USAGE', `--power-trace: meter ${meter?.id ?? flags.meter} reads no hardware${meter ? '' : ` (${note})`}; choose --meter rapl, nvml, amdsmi or one that reads here`);
  }
  const power_trace: ArmTraces | undefined = flags.powerTrace !== undefined ? { idle_ms: DEFAULT_IDLE_MS, current: null, done: [] } : undefined;
  const extra = { ...(flags.pue !== undefined ? { pue: flags.pue } : {}), ...(power_trace ? { power_trace } : {}) };
  let journal: InferJournal;
  let limiter: PowerLimiter | undefined;
  try {
    if (flags.gpuPowerLimits) limiter = await openPowerLimiter(flags.gpuPowerLimits, gpuLibrary(process.env));
    journal = resume ? InferJournal.reopen(journalPath) : InferJournal.create(journalPath, identity, started.toISOString());
  } catch (e) {
    limiter?.close();
    await meter?.close?.();
    throw e;
  }
  // Counts what this invocation journals, for the failure line.
  let newRuns = 0;
  let newArms = 0;
  const sink = {
    write(e: JournalEvent): void {
      journal.write(e);
      if (e.event === 'run') newRuns++;
      if (e.event === 'arm') newArms++;
    },
  };
  const kept = (): string =>
    `${(resume?.run_lines ?? 0) + newRuns} finished runs (${(resume?.finished.size ?? 0) + newArms} whole arms) kept in ${journalPath}; to continue, run the same command with --out ${out} --resume`;
  // The original GPU power limits go back on every way out, Ctrl-C included.
  const unhook = limiter ? restoreOnExit(limiter, (line) => io.err(`joulebench: ${line}\n`)) : null;
  // Ctrl-C on an hours-long sweep: the journal already holds every finished run; say how to go on.
  const onSigint = (): void => {
    journal.close();
    io.err(`joulebench: interrupted; ${kept()}\n`);
    process.exit(130);
  };
  process.once('SIGINT', onSigint);
  let file;
  try {
    const run = { ...extra, meter, meter_note: note, journal: sink, ...(resume ? { resume } : {}), ...(limiter ? { power_limiter: limiter } : {}) };
    file = llamaOpts ? await runInferLlamaCpp({ ...llamaOpts, ...run }) : await runInfer({ ...base, ...run });
  } catch (e) {
    const why = (e as Error)?.message ?? String(e);
    journal.write({ event: 'failed', utc: new Date().toISOString(), error: why });
    const code = e instanceof JoulebenchError ? e.code : 'E_RUN';
    if (newRuns === 0 && newArms === 0 && !resume) {
      journal.remove();
      throw new JoulebenchError(code, `${why}; nothing had finished, so no journal is kept`, { cause: e });
    }
    journal.close();
    throw new JoulebenchError(code, `${why}; ${kept()}`, { cause: e });
  } finally {
    process.removeListener('SIGINT', onSigint);
    unhook?.();
    limiter?.close();
    await meter?.close?.();
  }
  writeFileAtomic(out, prettyJson(file));
  if (power_trace && flags.powerTrace !== undefined) writeOutputFile(flags.powerTrace, armTracesCsv(power_trace), '--power-trace');
  journal.remove();
  const runId = flags.history !== false ? await recordForCli(io, inferHistoryInput(file, resolve(out))) : null;
  if (flags.json) io.out(prettyJson(file));
  else io.out(renderInferTable([{ path: out, file }], tableWidth(flags)));
  for (const w of file.summary.warnings) io.err(`joulebench: warning: ${w}\n`);
  if (!flags.quiet) io.err(`run file ${out}\n${runId !== null ? `history  #${runId}\n` : ''}`);
}

/** `infer --report FILES -o OUT`: the run files in every format `-o` offers (CSV: one row per arm, as the table). */
function inferRenderings(files: readonly { path: string; file: InferRunFile }[]) {
  return {
    json: () => prettyJson(files.length === 1 ? files[0]!.file : files.map((f) => ({ path: f.path, file: f.file }))),
    md: async () => {
      const { renderInferMarkdown } = await import('../../report/markdown.js');
      return files.map((f) => renderInferMarkdown(f.path, f.file)).join('\n');
    },
    html: async () => {
      const { buildHtmlReport } = await import('../../report/html/index.js');
      return buildHtmlReport(files.map((f) => ({ kind: 'infer' as const, label: f.path, origin: f.path, file: f.file, run_id: null })));
    },
    csv: async () => {
      const { toCsv } = await import('../../report/csv.js');
      const { head, rows } = inferTableRows(files);
      return toCsv(head, rows);
    },
    jsonl: () => files.flatMap((f) => f.file.arms.map((a) => JSON.stringify({ path: f.path, ...a }))).join('\n') + '\n',
    txt: () => renderInferTable(files),
  } satisfies Renderings;
}

/** Every traced arm's rows: `t_utc,arm,phase,<domain>_w…` (empty where a domain did not read). */
function armTracesCsv(t: ArmTraces): string {
  const domains = [...new Set(t.done.flatMap((d) => d.trace.domains()))];
  const lines = [['t_utc', 'arm', 'phase', ...domains.map((d) => `${d}_w`)].join(',')];
  for (const { arm, trace } of t.done) {
    const cell = /[",\n]/.test(arm) ? `"${arm.replaceAll('"', '""')}"` : arm;
    for (const r of trace.rows) lines.push([r.t_utc, cell, r.phase, ...domains.map((d) => (typeof r.watts[d] === 'number' ? String(round(r.watts[d], 3)) : ''))].join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** `auto`: the hardware counters that read here, else null energy (an estimate would meter joulebench, not the server). */
async function pickMeter(name: string, flags: Omit<MeterFlags, 'meter'>, inProcess = false): Promise<{ meter: Meter | null; note: string }> {
  if (name === 'none') return { meter: null, note: '--meter none: energy is null' };
  const opts = meterOptionsFrom(flags, process.env, name === 'auto' ? { auto_fallback: 'estimate' } : {});
  const meter = await createMeter(name, opts);
  const probe = await meter.probe();
  if (!probe.available) {
    await meter.close?.();
    throw new JoulebenchError('E_METER', `meter ${meter.id} cannot read here: ${probe.reason}${probe.fix ? ` (fix: ${probe.fix})` : ''}`);
  }
  if (name === 'auto' && (meter.describe() as { fallback?: unknown }).fallback) {
    await meter.close?.();
    const why = `no hardware counter reads (${String((meter.describe() as { no_hardware?: unknown }).no_hardware ?? 'none found')}); energy is null`;
    // Said without the auto meter's own "using the estimate": infer does not use it, and the note must agree with the null.
    const instead = inProcess
      ? '--meter estimate applies here: the inference runs in this process, so CPU time × watts per core estimates it'
      : 'infer never falls back to the estimate: it would meter this process, not the Ollama server';
    return { meter: null, note: `--meter auto: ${why} (${instead})` };
  }
  return { meter, note: '' };
}

/** Where NVML is (`$JOULEBENCH_NVML_LIBRARY`, else the driver's) and which GPUs are visible. */
export function gpuLibrary(env: NodeJS.ProcessEnv): { library?: string; cuda_visible_devices?: string } {
  const lib = env.JOULEBENCH_NVML_LIBRARY?.trim();
  return { ...(lib ? { library: lib } : {}), ...(env.CUDA_VISIBLE_DEVICES !== undefined ? { cuda_visible_devices: env.CUDA_VISIBLE_DEVICES } : {}) };
}

/** `200,250,300`: power limits in W, each > 0, no repeats. */
export function powerLimitList(value: string): number[] {
  const parts = value.split(',').map((s) => Number(s.trim()));
  if (parts.some((w) => !Number.isFinite(w) || w <= 0 || w > MAX_WATTS) || new Set(parts).size !== parts.length) {
    throw new InvalidArgumentError(`must be a comma-separated list of distinct watts above 0 (at most ${MAX_WATTS}), got ${quote(value)}`);
  }
  return parts;
}

function threadList(value: string): ThreadArm[] {
  const parts = value.split(',').map((s) => s.trim());
  if (parts.some((p) => p !== 'default' && (!/^\d+$/.test(p) || Number(p) < 1))) {
    throw new InvalidArgumentError(`must be a comma-separated list of integers >= 1 and/or default, got ${quote(value)}`);
  }
  return parts.map((p) => (p === 'default' ? 'default' : Number(p)));
}

/** The width the table must fit: the terminal's (stdout), unless --wide or stdout is not a terminal. */
function tableWidth(flags: InferFlags): number | null {
  if (flags.wide) return null;
  const cols = process.stdout.isTTY ? process.stdout.columns : Number(process.env.COLUMNS);
  return Number.isFinite(cols) && cols > 0 ? cols : null;
}
