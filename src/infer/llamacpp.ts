import { round } from '../core/stats.js';
import { JoulebenchError } from '../core/errors.js';
import type { Meter } from '../meters/meter.js';
import { NODE_LLAMA_CPP_VERSION } from '../targets/llamacpp/binding.js';
import { LlamaEngine, type LlamaEngineOptions, type LlamaGeneration } from '../targets/llamacpp/engine.js';
import type { JournalIdentity } from './journal.js';
import { inferFile, journalIdentity, metered, runArmBetweenSnapshots, runPhase, runPlan, THREAD_ARMS_NOTE } from './protocol.js';
import type { InferOptions, InferRunFile } from './protocol.js';
import type { InferArm, InferPhase, InferRun } from './types.js';

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
  return journalIdentity(opts, opts.model_paths, `llamacpp:gpu_layers=${opts.gpu_layers ?? 0}`, opts.ctx);
}

/**
 * Seed 004's protocol with the model in this process: per arm, cold runs each load the model afresh
 * (inside the run's window), then one loaded model serves warmup and scored runs; GPU snapshots around.
 */
export async function runInferLlamaCpp(opts: LlamaInferOptions): Promise<InferRunFile> {
  if (opts.model_paths.length === 0) throw new JoulebenchError('E_USAGE', '--model-path: at least one GGUF file is required');
  const now = opts.now ?? (() => new Date());
  const identity = llamaInferIdentity(opts);
  const resume = opts.resume ?? null;
  const started = resume ? new Date(resume.started_utc) : now();
  const transforms = { counts: {}, source_offsets: [] };
  const { resumes, arms } = await runPlan(opts, opts.model_paths, { identity, now, transforms: () => transforms }, (model, num_thread, limit_w) => runArm(opts, model, num_thread, now, limit_w));
  return inferFile(opts, identity, {
    started,
    target: { kind: 'llamacpp', library: `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, model_paths: [...opts.model_paths], gpu_layers: opts.gpu_layers ?? 0, ctx: opts.ctx ?? null },
    order: 'per arm: cold runs (a fresh model load and context in this process, each), then one loaded model: warmup (discarded), scored runs of the same prompt',
    options: { num_predict: opts.num_predict, seed: opts.seed, temperature: opts.temperature, ctx: opts.ctx ?? null, gpu_layers: opts.gpu_layers ?? 0 },
    notes: [
      'cold load times are floors: the OS page cache is not dropped, so a cold run re-reads the GGUF from memory (a warm-disk reload)',
      'scored runs repeat one prompt on one context: llama.cpp reuses its KV prefix, so their prompt evaluation is a cached-prefix figure, never a prefill rate',
      'prompt_eval_count is the tokens llama.cpp evaluated (its counter), not the prompt length; the prompt length is llamacpp.prompt_tokens',
      'eval_count is llama.cpp\'s single-token evaluations; the tokens generated are llamacpp.decode_tokens',
      THREAD_ARMS_NOTE,
      "the default arm's thread count is the physical cores this process may use (affinity, cgroup quota, os.availableParallelism()) that were idle when the arm began; each arm's threads_source says how it was chosen",
    ],
    ollama_version: null,
    transforms,
    resumes,
    arms,
  });
}

const GGUF_PARAMETER_SOURCE = "GGUF tensor shapes (sum of the products of each tensor's dimensions)";

async function runArm(opts: LlamaInferOptions, model: string, num_thread: number | null, now: () => Date, limit_w: number | null): Promise<InferArm> {
  return runArmBetweenSnapshots(opts, now, model, num_thread, limit_w, async (id) => {
    // An option left undefined (the default arm's threads among them) takes the engine's default.
    const { ctx, gpu_layers, module, max_threads, cpu_root } = opts;
    const base: LlamaEngineOptions = { model_path: model, ctx, gpu_layers, module, max_threads, cpu_root };
    // One count for every engine of the arm (cold and warm): the default is resolved once.
    const { threads, threads_source } = await new LlamaEngine({ ...base, threads: num_thread ?? undefined }).resolveThreads();
    const engineOpts: LlamaEngineOptions = { ...base, threads, threads_source };
    const gen = { max_tokens: opts.num_predict, temperature: opts.temperature, seed: opts.seed };
    let parameter_count: number | null = null;
    let gpu = 'false';

    const cold_load = await runPhase(opts, id, 'cold', opts.cold, async (i) => {
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
        parameter_count = engine.info?.parameter_count ?? null;
        gpu = engine.info?.gpu ?? gpu;
        return r;
      } finally {
        await engine.unload();
      }
    });
    const engine = new LlamaEngine(engineOpts);
    let warmup_discarded: InferRun[];
    let runs: InferRun[];
    try {
      await engine.load();
      parameter_count = engine.info?.parameter_count ?? null;
      gpu = engine.info?.gpu ?? gpu;
      const warm = (phase: InferPhase) => (i: number) => timed(opts.meter, now, phase, i, async () => ({ load_ms: null, g: await engine.generate(opts.prompt, gen) }));
      warmup_discarded = await runPhase(opts, id, 'warmup', opts.warmup, warm('warmup'));
      runs = await runPhase(opts, id, 'scored', opts.runs, warm('scored'));
    } finally {
      await engine.unload();
    }
    const cpuOnly = (opts.gpu_layers ?? 0) === 0 && gpu === 'false';
    // No server to ask: 0 when llama.cpp ran without a GPU backend and no layer offloaded, else unknown.
    const receipts = { size_vram: cpuOnly ? 0 : null, cpu_only_receipt: cpuOnly ? true : null, expires_at_utc: null };
    return { threads, threads_source, parameter_count, parameter_source: GGUF_PARAMETER_SOURCE, cold_load, warmup_discarded, runs, receipts };
  });
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
  const { out, energy } = await metered(meter, (o) => o.g.decode_tokens, work);
  const { load_ms, g } = out;
  const load = load_ms ?? 0;
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
    ...energy,
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
