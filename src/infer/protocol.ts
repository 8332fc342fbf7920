import type { LocalPrices } from '../core/usd-parts.js';
import { JoulebenchError } from '../core/errors.js';
import { underLimit, type PowerLimiter } from '../meters/nvml/power-limit.js';
import { round } from '../core/stats.js';
import type { Meter } from '../meters/meter.js';
import { PowerTrace } from '../meters/power-trace.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { OllamaClient, type OllamaOptions } from '../targets/ollama/client.js';
import { redactQuery } from '../targets/openai/redact.js';
import { ratePerS } from '../targets/ollama/target.js';
import { VERSION } from '../version.js';
import { gpuSnapshot, type GpuSnapshot } from './host.js';
import { identityMismatch, type JournalIdentity, type JournalSink, type JournalState, type ResumeRecord } from './journal.js';
import { promptSha256 } from './prompt.js';
import type { InferSummary } from './stats.js';
import { summariseFile } from './summary-file.js';
import type { ArmReceipts, InferArm, InferPhase, InferRun, MachinePeak, ThreadArm } from './types.js';
import { TransformCounter } from './utc.js';

/** Everything `runInfer` needs; the CLI fills it from flags. */
export interface InferOptions {
  baseUrl: string;
  models: string[];
  /** The thread arms, in order: counts and/or `default` (Ollama's own choice). Only these run. */
  threads: ThreadArm[];
  /** Scored runs per arm (rule 1). */
  runs: number;
  /** Warmup runs per arm, kept as `warmup_discarded`, never in a statistic. */
  warmup: number;
  /** Cold runs per arm: the model unloaded before each (rule 2). */
  cold: number;
  prompt: string;
  prompt_source: string;
  num_predict: number;
  seed: number;
  temperature: number;
  num_ctx?: number;
  /** A measured meter, or `null`: energy fields are then null (never 0). */
  meter: Meter | null;
  /** Why energy is missing, when `meter` is null. */
  meter_note?: string;
  /** Shell command whose output is the GPU snapshot; `null` skips the receipt. */
  gpu_snapshot_cmd: string | null;
  /** `--peak-flops`; otherwise the CPU default applies to CPU-only arms. */
  peak: MachinePeak | null;
  cpu_default_peak: MachinePeak | null;
  /** Electricity and hardware prices: each arm's median request in dollars (recorded in the file). */
  prices?: LocalPrices;
  /** How long to wait for a model to leave `/api/ps` after `keep_alive: 0`, ms. */
  unload_timeout_ms?: number;
  poll_interval_ms?: number;
  request_timeout_ms?: number;
  host: Record<string, unknown>;
  argv: string[];
  /** `--gpu-power-limits`, W: every model × thread arm runs once under each, set and restored by `power_limiter`. */
  gpu_power_limits_w?: number[];
  power_limiter?: PowerLimiter;
  /** Wall clock for the UTC stamps; injected in tests. */
  now?: () => Date;
  onProgress?: (line: string) => void;
  /** Receives every finished run and arm the moment it is finished (the journal beside `--out`). */
  journal?: JournalSink;
  /** A journal read back: its finished arms are kept, not re-run; an arm it holds half-finished re-runs from cold. */
  resume?: JournalState;
  /** `--pue`: the facility's PUE, for each arm's modelled facility layer (recorded in the file). */
  pue?: number;
  /** `--power-trace`: a trace per arm run (needs `meter`). */
  power_trace?: ArmTraces;
}

/** Each arm's power trace: `idle_ms` with nothing sent, then `warmup` (cold and warmup runs), then `scored`. */
export interface ArmTraces {
  idle_ms: number;
  /** The arm being traced now. */
  current: PowerTrace | null;
  /** The arms traced, in order. */
  done: { arm: string; trace: PowerTrace }[];
}

/** A `joulebench infer` run file. */
export interface InferRunFile {
  format: 'joulebench-infer/1';
  started_utc: string;
  finished_utc: string;
  prompt_sha256: string;
  prompt_source: string;
  prompt_chars: number;
  target: { kind: 'ollama'; base_url: string } | { kind: 'llamacpp'; library: string; model_paths: string[]; gpu_layers: number; ctx: number | null };
  protocol: Record<string, unknown>;
  receipts: {
    host: Record<string, unknown>;
    /** Ollama's version (ollama target); null for llamacpp, whose library version is in `target.library`. */
    ollama_version: string | null;
    joulebench_version: string;
    node_version: string;
    argv: string[];
    meter: Record<string, unknown>;
    gpu_snapshot_cmd: string | null;
    machine_peak: { configured: MachinePeak | null; cpu_default: MachinePeak | null };
    transforms: { counts: Record<string, number>; source_offsets: string[] };
    /** Each `--resume` that produced this file: arms kept from the journal, half-finished arms re-run. */
    resumes: ResumeRecord[];
  };
  arms: InferArm[];
  summary: InferSummary;
  /** `--electricity-usd-per-kwh`, `--hardware-usd-per-hour` (absent: none given). */
  prices?: LocalPrices;
  /** `--pue` (absent: none given). */
  pue?: number;
}

export { summariseFile };

/**
 * Seed 004's protocol, per model × thread count (an arm): GPU snapshot; cold runs, each after
 * `keep_alive: 0` and confirmed absent from `/api/ps`; warmup (kept, discarded); scored runs, all with
 * one frozen prompt; `/api/ps` receipt; GPU snapshot again, compared byte for byte.
 */
export async function runInfer(opts: InferOptions): Promise<InferRunFile> {
  if (opts.models.length === 0) throw new JoulebenchError('E_USAGE', '--model: at least one model is required');
  const now = opts.now ?? (() => new Date());
  const client = new OllamaClient(opts.baseUrl, opts.request_timeout_ms ?? 600_000);
  const identity = inferIdentity(opts);
  const resume = opts.resume ?? null;
  const differs = resume ? identityMismatch(resume.identity, identity) : null;
  if (differs) throw new JoulebenchError('E_USAGE', `--resume: the journal was written for a different run (${differs}); use another --out, or delete the journal to start over`);
  const transforms = resume?.transforms ? TransformCounter.from(resume.transforms) : new TransformCounter();
  const started = resume ? new Date(resume.started_utc) : now();
  const ollama_version = await client.version();
  const params = new Map<string, Awaited<ReturnType<OllamaClient['show']>>>();
  const { resumes, arms } = await runPlan(opts, opts.models, { identity, now, transforms: () => transforms.toJSON() }, async (model, num_thread, limit_w) => {
    if (!params.has(model)) params.set(model, await client.show(model));
    const { parameter_count, source: parameter_source } = params.get(model)!;
    return runArmBetweenSnapshots(opts, now, model, num_thread, limit_w, async (id) => {
      const body = { model, prompt: opts.prompt, options: requestOptions(opts, num_thread) };
      const cold_load = await runPhase(opts, id, 'cold', opts.cold, async (i) => {
        const ps_polls = await unloadAndConfirm(client, model, opts.unload_timeout_ms ?? 30_000, opts.poll_interval_ms ?? 100);
        const r = await timedRun(client, body, 'cold', i, opts.meter, now);
        r.unload = { keep_alive_0: true, absent_from_ps: true, ps_polls };
        return r;
      });
      const warmup_discarded = await runPhase(opts, id, 'warmup', opts.warmup, (i) => timedRun(client, body, 'warmup', i, opts.meter, now));
      const runs = await runPhase(opts, id, 'scored', opts.runs, (i) => timedRun(client, body, 'scored', i, opts.meter, now));
      const listed = (await client.ps()).find((m) => sameModel(m.name, model) || sameModel(m.model, model));
      const receipts = {
        size_vram: listed?.size_vram ?? null,
        cpu_only_receipt: listed?.size_vram === null || listed?.size_vram === undefined ? null : listed.size_vram === 0,
        expires_at_utc: listed?.expires_at ? transforms.utc(listed.expires_at) : null,
      };
      return { parameter_count, parameter_source, cold_load, warmup_discarded, runs, receipts };
    });
  });
  return inferFile(opts, identity, {
    started,
    target: { kind: 'ollama', base_url: redactQuery(client.baseUrl) },
    order: 'per arm: cold runs (keep_alive 0, then absent from /api/ps, before each), warmup (discarded), scored runs',
    options: requestOptions(opts, null),
    notes: [
      'cold load times are floors: unloading the model does not drop the page cache, so a cold run is a warm-disk reload unless the cache was dropped by hand',
      THREAD_ARMS_NOTE,
    ],
    ollama_version,
    transforms: transforms.toJSON(),
    resumes,
    arms,
  });
}

/** The note every infer file carries on comparing thread arms. */
export const THREAD_ARMS_NOTE = 'thread arms differ in configuration: ratios between them, and between machines, are configuration-inclusive, not silicon-pure';

/**
 * Every arm (model × `--threads` value) in order: kept when a resumed journal finished it, else run and
 * journaled. Also the resume records: the journal's, plus one for this start (journaled and announced).
 */
export async function runPlan(
  opts: Pick<InferOptions, 'journal' | 'onProgress' | 'resume' | 'power_limiter' | 'power_trace' | 'meter'>,
  models: readonly string[],
  p: { identity: JournalIdentity; now: () => Date; transforms: () => InferRunFile['receipts']['transforms'] },
  run: (model: string, num_thread: number | null, limit_w: number | null) => Promise<InferArm>,
): Promise<{ resumes: ResumeRecord[]; arms: InferArm[] }> {
  const { threads } = p.identity;
  if (threads.length === 0) throw new JoulebenchError('E_USAGE', '--threads: at least one thread count (or default) is required');
  const limits = p.identity.gpu_power_limits_w ?? [null];
  const plan = models.flatMap((model) =>
    threads.flatMap((t) => limits.map((limit_w) => ({ model, num_thread: t === 'default' ? null : t, limit_w, id: armId(model, t === 'default' ? null : t, limit_w) }))),
  );
  const resume = opts.resume ?? null;
  const resumes: ResumeRecord[] = [...(resume?.resumes ?? [])];
  if (resume) {
    const record: ResumeRecord = {
      resumed_utc: p.now().toISOString(),
      finished_arms_kept: plan.filter((a) => resume.finished.has(a.id)).map((a) => a.id),
      partial_arms_discarded: [...resume.partial].map(([arm, runs_discarded]) => ({ arm, runs_discarded })),
    };
    resumes.push(record);
    opts.journal?.write({ event: 'resume', ...record });
    opts.onProgress?.(
      `resuming: ${record.finished_arms_kept.length} of ${plan.length} arms finished and kept` +
        (record.partial_arms_discarded.length ? `; ${record.partial_arms_discarded.map((d) => `${d.arm} (${d.runs_discarded} runs)`).join(', ')} re-run from cold` : ''),
    );
  }
  const arms: InferArm[] = [];
  for (const [k, { model, num_thread, limit_w, id }] of plan.entries()) {
    const done = resume?.finished.get(id);
    opts.onProgress?.(`arm ${k + 1}/${plan.length}: ${id}${done ? ' (finished before, kept)' : ''}`);
    const arm = done ?? (await underLimit(opts.power_limiter, limit_w, () => traced(opts, id, () => run(model, num_thread, limit_w))));
    if (!done) opts.journal?.write({ event: 'arm', arm, transforms: p.transforms() });
    arms.push(arm);
  }
  return { resumes, arms };
}

/** Runs an arm under its own power trace, when one is asked for; the summary goes in the arm. */
async function traced(opts: Pick<InferOptions, 'power_trace' | 'meter'>, id: string, run: () => Promise<InferArm>): Promise<InferArm> {
  const pt = opts.power_trace;
  if (!pt || !opts.meter) return run();
  const trace = (pt.current = new PowerTrace(opts.meter));
  let arm: InferArm;
  try {
    await trace.begin('idle');
    await sleep(pt.idle_ms);
    arm = await run();
  } finally {
    await trace.end();
    pt.current = null;
  }
  pt.done.push({ arm: id, trace });
  return { ...arm, power_trace: trace.summary() };
}

/** An infer run file from the parts that differ by target; the rest comes from the options. */
export function inferFile(
  opts: Omit<InferOptions, 'baseUrl' | 'models'>,
  identity: JournalIdentity,
  p: Pick<InferRunFile, 'target' | 'arms'> & Pick<InferRunFile['receipts'], 'ollama_version' | 'transforms' | 'resumes'> & { started: Date; order: string; options: object; notes: string[] },
): InferRunFile {
  return {
    format: 'joulebench-infer/1',
    started_utc: p.started.toISOString(),
    finished_utc: (opts.now ?? (() => new Date()))().toISOString(),
    prompt_sha256: identity.prompt_sha256,
    prompt_source: opts.prompt_source,
    prompt_chars: opts.prompt.length,
    target: p.target,
    protocol: { order: p.order, cold: opts.cold, warmup: opts.warmup, runs: opts.runs, threads: identity.threads, options: p.options, notes: p.notes },
    receipts: {
      host: opts.host,
      ollama_version: p.ollama_version,
      joulebench_version: VERSION,
      node_version: process.version,
      argv: opts.argv,
      meter: opts.meter ? { id: opts.meter.id, source: opts.meter.source, ...opts.meter.describe() } : { id: null, note: opts.meter_note ?? 'no meter: energy is null' },
      gpu_snapshot_cmd: opts.gpu_snapshot_cmd,
      ...(opts.power_limiter ? { gpu_power_limits: { ...opts.power_limiter.describe(), set: 'before each arm, the original limits restored after it (also on Ctrl-C)' } } : {}),
      machine_peak: { configured: opts.peak, cpu_default: opts.cpu_default_peak },
      transforms: p.transforms,
      resumes: p.resumes,
    },
    arms: p.arms,
    summary: summariseFile(p.arms, opts.peak, opts.cpu_default_peak, opts.prices, opts.pue),
    ...(opts.prices ? { prices: opts.prices } : {}),
    ...(opts.pue !== undefined ? { pue: opts.pue } : {}),
  };
}

/** `n` runs of one phase of an arm, each announced and journaled as it finishes. */
export async function runPhase(
  opts: Pick<InferOptions, 'journal' | 'onProgress' | 'power_trace'>,
  id: string,
  phase: InferPhase,
  n: number,
  one: (i: number) => Promise<InferRun>,
): Promise<InferRun[]> {
  const out: InferRun[] = [];
  if (n > 0) await opts.power_trace?.current?.phase(phase === 'scored' ? 'scored' : 'warmup');
  for (let i = 0; i < n; i++) {
    opts.onProgress?.(`${id}: ${phase === 'scored' ? 'run' : phase} ${i + 1}/${n}`);
    const r = await one(i);
    out.push(r);
    opts.journal?.write({ event: 'run', arm: id, run: r });
  }
  return out;
}

/** One request's work under a meter window (none for a target that reports its own energy), and its energy fields. */
export async function metered<T>(meter: Meter | null, decoded: (out: T) => number | null, work: () => Promise<T>): Promise<{ out: T; energy: RunEnergy }> {
  const window = meter && !meter.usesTargetEnergy ? await meter.start() : null;
  let out: T;
  try {
    out = await work();
  } catch (e) {
    await window?.stop();
    throw e;
  }
  const reading = window ? await window.stop() : null;
  const energy_j = reading?.joules ?? null;
  const tokens = decoded(out);
  // Per-token figures only from a valid window; the gross reading stays, beside its validity.
  const invalid = reading?.validity?.valid === false;
  const per = (a: number | null, b: number | null): number | null => (invalid || a === null || b === null || !(b > 0) ? null : round(a / b, 9));
  const energy: RunEnergy = {
    energy_j,
    energy_basis: 'gross',
    energy_source: energy_j === null ? 'none' : reading!.source,
    below_floor: reading?.below_floor ?? false,
    ...(reading && Object.keys(reading.by_domain).length > 0 ? { by_domain: reading.by_domain } : {}),
    ...(reading?.validity ? { energy_validity: reading.validity } : {}),
    j_per_decoded_token: per(energy_j, tokens),
    decoded_tokens_per_j: per(tokens, energy_j),
  };
  return { out, energy };
}

type RunEnergy = Pick<InferRun, 'energy_j' | 'energy_basis' | 'energy_source' | 'below_floor' | 'by_domain' | 'energy_validity' | 'j_per_decoded_token' | 'decoded_tokens_per_j'>;

/** What a journal is written for, from the options: a resume must match it (prompt, models, threads, URL, protocol). */
export function inferIdentity(opts: InferOptions): JournalIdentity {
  return journalIdentity(opts, opts.models, redactQuery(opts.baseUrl.replace(/\/+$/, '')), opts.num_ctx);
}

/** A journal identity; `base_url` names the target (Ollama's URL, or llamacpp's settings). */
export function journalIdentity(opts: Omit<InferOptions, 'baseUrl' | 'models'>, models: readonly string[], base_url: string, num_ctx: number | undefined): JournalIdentity {
  const { cold, warmup, runs, num_predict, seed, temperature } = opts;
  return {
    prompt_sha256: promptSha256(opts.prompt),
    models: [...models],
    threads: opts.threads.filter((t, i, all) => all.indexOf(t) === i),
    base_url,
    protocol: { cold, warmup, runs, num_predict, seed, temperature, num_ctx: num_ctx ?? null },
    ...(opts.gpu_power_limits_w?.length ? { gpu_power_limits_w: [...opts.gpu_power_limits_w] } : {}),
  };
}

export function armId(model: string, num_thread: number | null, limit_w: number | null = null): string {
  return `${model}@t=${num_thread ?? 'default'}${limit_w === null ? '' : `@pl=${limit_w}W`}`;
}

function requestOptions(opts: InferOptions, num_thread: number | null): OllamaOptions {
  const o: OllamaOptions = { num_predict: opts.num_predict, seed: opts.seed, temperature: opts.temperature };
  if (opts.num_ctx !== undefined) o.num_ctx = opts.num_ctx;
  if (num_thread !== null) o.num_thread = num_thread;
  return o;
}

/** What an arm's own work gives: its runs and the receipts a target takes; the rest of the arm is {@link runArmBetweenSnapshots}'. */
type ArmWork = Pick<InferArm, 'threads' | 'threads_source' | 'parameter_count' | 'parameter_source' | 'cold_load' | 'warmup_discarded' | 'runs'> & {
  receipts: Pick<ArmReceipts, 'size_vram' | 'cpu_only_receipt' | 'expires_at_utc'>;
};

/** One arm of either target: announced in the journal, its work between two GPU snapshots, compared for contamination. */
export async function runArmBetweenSnapshots(
  opts: Pick<InferOptions, 'journal' | 'gpu_snapshot_cmd'>,
  now: () => Date,
  model: string,
  num_thread: number | null,
  limit_w: number | null,
  work: (id: string) => Promise<ArmWork>,
): Promise<InferArm> {
  const id = armId(model, num_thread, limit_w);
  const started = now();
  opts.journal?.write({ event: 'arm-start', arm: id, utc: started.toISOString() });
  const snapshot = (): Promise<GpuSnapshot> | null => (opts.gpu_snapshot_cmd ? gpuSnapshot(opts.gpu_snapshot_cmd) : null);
  const before = await snapshot();
  // `threads` (llamacpp) is what is left: it comes right after num_thread in the arm.
  const { parameter_count, parameter_source, cold_load, warmup_discarded, runs, receipts: taken, ...threads } = await work(id);
  const receipts: ArmReceipts = { ...taken, ...compareSnapshots(before, await snapshot()) };
  const contaminated = receipts.gpu_snapshot === 'changed';
  return {
    id,
    model,
    num_thread,
    ...threads,
    ...(limit_w !== null ? { gpu_power_limit_w: limit_w } : {}),
    parameter_count,
    parameter_source,
    started_utc: started.toISOString(),
    finished_utc: now().toISOString(),
    cold_load,
    warmup_discarded,
    runs,
    receipts,
    contaminated,
    contamination: contaminated
      ? `GPU snapshot changed during the arm: before ${JSON.stringify(receipts.nvidia_before)}, after ${JSON.stringify(receipts.nvidia_after)}`
      : null,
  };
}

/** Byte-for-byte comparison of the two snapshots. A snapshot readable on one side only counts as changed. */
export function compareSnapshots(
  before: GpuSnapshot | null,
  after: GpuSnapshot | null,
): Pick<ArmReceipts, 'nvidia_before' | 'nvidia_after' | 'gpu_snapshot' | 'gpu_snapshot_error'> {
  const b = before?.output ?? null;
  const a = after?.output ?? null;
  const error = before?.error ?? after?.error ?? (before === null ? 'no GPU snapshot command' : null);
  if (b === null && a === null) return { nvidia_before: null, nvidia_after: null, gpu_snapshot: 'unavailable', gpu_snapshot_error: error };
  return { nvidia_before: b, nvidia_after: a, gpu_snapshot: b === a ? 'identical' : 'changed', gpu_snapshot_error: error };
}

function sameModel(listed: string, asked: string): boolean {
  return listed === asked || listed === `${asked}:latest` || `${listed}:latest` === asked;
}

/** `keep_alive: 0`, then polls `/api/ps` until the model is gone; returns the number of polls. */
async function unloadAndConfirm(client: OllamaClient, model: string, timeout_ms: number, interval_ms: number): Promise<number> {
  await client.unload(model);
  const deadline = Date.now() + timeout_ms;
  for (let polls = 1; ; polls++) {
    const loaded = await client.ps();
    if (!loaded.some((m) => sameModel(m.name, model) || sameModel(m.model, model))) return polls;
    if (Date.now() > deadline) {
      throw new JoulebenchError('E_RUN', `${model} is still listed in /api/ps ${timeout_ms} ms after keep_alive 0: a cold run would not be cold`);
    }
    await new Promise((r) => setTimeout(r, interval_ms));
  }
}

async function timedRun(
  client: OllamaClient,
  body: Record<string, unknown>,
  phase: InferPhase,
  index: number,
  meter: Meter | null,
  now: () => Date,
): Promise<InferRun> {
  const started_utc = now().toISOString();
  const { out: r, energy } = await metered(meter, (o) => o.timings.eval_count, () => client.stream('/api/generate', body));
  const t = r.timings;
  return {
    phase,
    index,
    started_utc,
    prompt_eval_count: t.prompt_eval_count,
    prompt_eval_duration_ns: t.prompt_eval_duration_ns,
    eval_count: t.eval_count,
    eval_duration_ns: t.eval_duration_ns,
    load_duration_ns: t.load_duration_ns,
    total_duration_ns: t.total_duration_ns,
    decode_tok_s: nullableRound(ratePerS(t.eval_count, t.eval_duration_ns)),
    prefill_tok_s: nullableRound(ratePerS(t.prompt_eval_count, t.prompt_eval_duration_ns)),
    prefill_kind: phase === 'cold' ? 'cold' : 'cached-prefix',
    ttft_ms: r.ttft_ms === null ? null : round(r.ttft_ms, 3),
    e2e_ms: round(r.e2e_ms, 3),
    ...energy,
  };
}

function nullableRound(v: number | null): number | null {
  return v === null ? null : round(v, 6);
}
