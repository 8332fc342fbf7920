import { round } from '../core/stats.js';
import { JoulebenchError } from '../core/errors.js';
import type { EnergySource } from '../core/types.js';
import type { Meter } from '../meters/meter.js';
import { NODE_LLAMA_CPP_VERSION } from '../targets/llamacpp/binding.js';
import { LlamaEngine, type LlamaEngineOptions, type LlamaGeneration } from '../targets/llamacpp/engine.js';
import { VERSION } from '../version.js';
import { gpuSnapshot } from './host.js';
import type { JournalIdentity } from './journal.js';
import { armId, compareSnapshots, planArms, recordResume, summariseFile, uniqueThreads, type InferOptions, type InferRunFile } from './protocol.js';
import { promptSha256 } from './prompt.js';
import type { ArmReceipts, InferArm, InferPhase, InferRun } from './types.js';

/** What `infer --target llamacpp` needs beyond the shared options: GGUF files instead of Ollama models. */
export interface LlamaInferOptions extends Omit<InferOptions, 'baseUrl' | 'models' | 'unload_timeout_ms' | 'poll_interval_ms' | 'request_timeout_ms' | 'num_ctx'> {
  model_paths: string[];
  ctx?: number;
  gpu_layers?: number;
  /** Module to import instead of node-llama-cpp (tests only). */
  module?: string;
  /** Caps every context's thread count (`llama.maxThreads`); library users and tests only. */
  max_threads?: number;
  /** Root the CPU topology, affinity and cgroup files are read under for the `default` arm (tests). */
  cpu_root?: string;
}

/** The journal identity of a llamacpp infer run (the model files stand where Ollama's URL and models do). */
export function llamaInferIdentity(opts: LlamaInferOptions): JournalIdentity {
  return {
    prompt_sha256: promptSha256(opts.prompt),
    models: [...opts.model_paths],
    threads: uniqueThreads(opts.threads),
    base_url: `llamacpp:gpu_layers=${opts.gpu_layers ?? 0}`,
    protocol: { cold: opts.cold, warmup: opts.warmup, runs: opts.runs, num_predict: opts.num_predict, seed: opts.seed, temperature: opts.temperature, num_ctx: opts.ctx ?? null },
  };
}

/**
 * Seed 004's protocol with the model in this process. Per GGUF × thread count (an arm): GPU snapshot;
 * cold runs, each a fresh model load and context (the load is inside the run's window and its
 * `load_duration_ns`); then one loaded model for warmup (discarded) and scored runs of the same prompt,
 * whose KV prefix the context keeps (cached-prefix, by the library's own counters); GPU snapshot again.
 * The OS page cache is not dropped: cold loads are warm-disk reloads (a floor), as the file says.
 */
export async function runInferLlamaCpp(opts: LlamaInferOptions): Promise<InferRunFile> {
  if (opts.model_paths.length === 0) throw new JoulebenchError('E_USAGE', '--model-path: at least one GGUF file is required');
  const now = opts.now ?? (() => new Date());
  const identity = llamaInferIdentity(opts);
  const resume = opts.resume ?? null;
  const started = resume ? new Date(resume.started_utc) : now();
  const plan = planArms(opts.model_paths, identity.threads);
  const resumes = recordResume(opts, plan, resume, now);
  const arms: InferArm[] = [];
  for (const { model, num_thread, id } of plan) {
    const done = resume?.finished.get(id);
    if (done) {
      arms.push(done);
      continue;
    }
    const arm = await runArm(opts, model, num_thread, now);
    opts.journal?.write({ event: 'arm', arm, transforms: { counts: {}, source_offsets: [] } });
    arms.push(arm);
  }
  return {
    format: 'joulebench-infer/1',
    started_utc: started.toISOString(),
    finished_utc: now().toISOString(),
    prompt_sha256: identity.prompt_sha256,
    prompt_source: opts.prompt_source,
    prompt_chars: opts.prompt.length,
    target: { kind: 'llamacpp', library: `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, model_paths: [...opts.model_paths], gpu_layers: opts.gpu_layers ?? 0, ctx: opts.ctx ?? null },
    protocol: {
      order: 'per arm: cold runs (a fresh model load and context in this process, each), then one loaded model: warmup (discarded), scored runs of the same prompt',
      cold: opts.cold,
      warmup: opts.warmup,
      runs: opts.runs,
      threads: identity.threads,
      options: { num_predict: opts.num_predict, seed: opts.seed, temperature: opts.temperature, ctx: opts.ctx ?? null, gpu_layers: opts.gpu_layers ?? 0 },
      notes: [
        'cold load times are floors: the OS page cache is not dropped, so a cold run re-reads the GGUF from memory (a warm-disk reload)',
        'scored runs repeat one prompt on one context: llama.cpp reuses its KV prefix, so their prompt evaluation is a cached-prefix figure, never a prefill rate',
        'prompt_eval_count is the tokens llama.cpp evaluated (its counter), not the prompt length; the prompt length is llamacpp.prompt_tokens',
        'eval_count is llama.cpp\'s single-token evaluations; the tokens generated are llamacpp.decode_tokens',
        'thread arms differ in configuration: ratios between them, and between machines, are configuration-inclusive, not silicon-pure',
        "the default arm's thread count is the physical cores this process may use (affinity, cgroup quota, os.availableParallelism()) that were idle when the arm began; each arm's threads_source says how it was chosen",
      ],
    },
    receipts: {
      host: opts.host,
      ollama_version: null,
      joulebench_version: VERSION,
      node_version: process.version,
      argv: opts.argv,
      meter: opts.meter ? { id: opts.meter.id, source: opts.meter.source, ...opts.meter.describe() } : { id: null, note: opts.meter_note ?? 'no meter: energy is null' },
      gpu_snapshot_cmd: opts.gpu_snapshot_cmd,
      machine_peak: { configured: opts.peak, cpu_default: opts.cpu_default_peak },
      transforms: { counts: {}, source_offsets: [] },
      resumes,
    },
    arms,
    summary: summariseFile(arms, opts.peak, opts.cpu_default_peak),
  };
}

async function runArm(opts: LlamaInferOptions, model: string, num_thread: number | null, now: () => Date): Promise<InferArm> {
  const id = armId(model, num_thread);
  const started = now();
  opts.journal?.write({ event: 'arm-start', arm: id, utc: started.toISOString() });
  const before = opts.gpu_snapshot_cmd ? await gpuSnapshot(opts.gpu_snapshot_cmd) : null;
  let engineOpts: LlamaEngineOptions = {
    model_path: model,
    ...(num_thread !== null ? { threads: num_thread } : {}),
    ...(opts.ctx !== undefined ? { ctx: opts.ctx } : {}),
    ...(opts.gpu_layers !== undefined ? { gpu_layers: opts.gpu_layers } : {}),
    ...(opts.module !== undefined ? { module: opts.module } : {}),
    ...(opts.max_threads !== undefined ? { max_threads: opts.max_threads } : {}),
    ...(opts.cpu_root !== undefined ? { cpu_root: opts.cpu_root } : {}),
  };
  // One count for every engine of the arm (cold and warm): the default is resolved once.
  const { threads, threads_source } = await new LlamaEngine(engineOpts).resolveThreads();
  engineOpts = { ...engineOpts, threads, threads_source };
  const gen = { max_tokens: opts.num_predict, temperature: opts.temperature, seed: opts.seed };
  let parameter_count: number | null = null;
  let gpu = 'false';

  const cold_load: InferRun[] = [];
  for (let i = 0; i < opts.cold; i++) {
    opts.onProgress?.(`${id}: cold ${i + 1}/${opts.cold}`);
    const engine = new LlamaEngine(engineOpts);
    try {
      const r = await timed(opts.meter, now, 'cold', i, async () => {
        const load_ms = await engine.load();
        return { load_ms, g: await engine.generate(opts.prompt, gen) };
      });
      if ((r.llamacpp?.prompt_tokens_reused ?? 0) > 0) {
        throw new JoulebenchError('E_RUN', `${id}: cold run ${i} reused ${r.llamacpp?.prompt_tokens_reused} cached prompt tokens in a fresh context: it would not be cold`);
      }
      r.fresh_load = true;
      cold_load.push(r);
      opts.journal?.write({ event: 'run', arm: id, run: r });
      parameter_count = engine.info?.parameter_count ?? null;
      gpu = engine.info?.gpu ?? gpu;
    } finally {
      await engine.unload();
    }
  }
  const engine = new LlamaEngine(engineOpts);
  const warmup_discarded: InferRun[] = [];
  const runs: InferRun[] = [];
  try {
    await engine.load();
    parameter_count = engine.info?.parameter_count ?? null;
    gpu = engine.info?.gpu ?? gpu;
    for (let i = 0; i < opts.warmup; i++) {
      opts.onProgress?.(`${id}: warmup ${i + 1}/${opts.warmup}`);
      const r = await timed(opts.meter, now, 'warmup', i, async () => ({ load_ms: null, g: await engine.generate(opts.prompt, gen) }));
      warmup_discarded.push(r);
      opts.journal?.write({ event: 'run', arm: id, run: r });
    }
    for (let i = 0; i < opts.runs; i++) {
      opts.onProgress?.(`${id}: run ${i + 1}/${opts.runs}`);
      const r = await timed(opts.meter, now, 'scored', i, async () => ({ load_ms: null, g: await engine.generate(opts.prompt, gen) }));
      runs.push(r);
      opts.journal?.write({ event: 'run', arm: id, run: r });
    }
  } finally {
    await engine.unload();
  }
  const after = opts.gpu_snapshot_cmd ? await gpuSnapshot(opts.gpu_snapshot_cmd) : null;
  const cpuOnly = (opts.gpu_layers ?? 0) === 0 && gpu === 'false';
  const receipts: ArmReceipts = {
    // No server to ask: 0 when llama.cpp ran without a GPU backend and no layer offloaded, else unknown.
    size_vram: cpuOnly ? 0 : null,
    cpu_only_receipt: cpuOnly ? true : null,
    expires_at_utc: null,
    ...compareSnapshots(before, after),
  };
  const contaminated = receipts.gpu_snapshot === 'changed';
  return {
    id,
    model,
    num_thread,
    threads,
    threads_source,
    parameter_count,
    parameter_source: 'GGUF tensor shapes (sum of the products of each tensor\'s dimensions)',
    started_utc: started.toISOString(),
    finished_utc: now().toISOString(),
    cold_load,
    warmup_discarded,
    runs,
    receipts,
    contaminated,
    contamination: contaminated ? `GPU snapshot changed during the arm: before ${JSON.stringify(receipts.nvidia_before)}, after ${JSON.stringify(receipts.nvidia_after)}` : null,
  };
}

/** One request under the meter: for a cold run the window holds the model load too (as Ollama's does). */
async function timed(
  meter: Meter | null,
  now: () => Date,
  phase: InferPhase,
  index: number,
  work: () => Promise<{ load_ms: number | null; g: LlamaGeneration }>,
): Promise<InferRun> {
  const started_utc = now().toISOString();
  const window = meter && !meter.usesTargetEnergy ? await meter.start() : null;
  let out;
  try {
    out = await work();
  } catch (e) {
    await window?.stop();
    throw e;
  }
  const reading = window ? await window.stop() : null;
  const { load_ms, g } = out;
  const load = load_ms ?? 0;
  const energy_j = reading?.joules ?? null;
  const energy_source: EnergySource = energy_j === null ? 'none' : reading!.source;
  const per = (a: number | null, b: number | null): number | null => (a === null || b === null || !(b > 0) ? null : round(a / b, 9));
  const rate = (n: number, ms: number): number | null => (n > 0 && ms > 0 ? round(n / (ms / 1000), 6) : null);
  return {
    phase,
    index,
    started_utc,
    prompt_eval_count: g.prompt_tokens_evaluated,
    prompt_eval_duration_ns: Math.round(g.prefill_ms * 1e6),
    eval_count: g.decode_evals,
    eval_duration_ns: Math.round(g.decode_ms * 1e6),
    load_duration_ns: load_ms === null ? 0 : Math.round(load_ms * 1e6),
    total_duration_ns: Math.round((load + g.e2e_ms) * 1e6),
    decode_tok_s: rate(g.decode_evals, g.decode_ms),
    prefill_tok_s: rate(g.prompt_tokens_evaluated, g.prefill_ms),
    prefill_kind: phase === 'cold' ? 'cold' : 'cached-prefix',
    // From the start of the request; a cold run's includes the model load (fully cold, rule 3).
    ttft_ms: g.ttft_ms === null ? null : round(load + g.ttft_ms, 3),
    e2e_ms: round(load + g.e2e_ms, 3),
    energy_j,
    energy_basis: 'gross',
    energy_source,
    below_floor: reading?.below_floor ?? false,
    j_per_decoded_token: per(energy_j, g.decode_tokens),
    decoded_tokens_per_j: per(g.decode_tokens, energy_j),
    llamacpp: {
      prompt_tokens: g.prompt_tokens,
      prompt_tokens_reused: g.prompt_tokens_reused,
      decode_tokens: g.decode_tokens,
      threads_used: g.threads_used,
      token_times_ms: g.token_times_ms.map((t) => round(t, 3)),
      model_load_ms: load_ms === null ? null : round(load_ms, 3),
    },
  };
}
