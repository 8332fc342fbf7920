import { z } from 'zod';
import { round } from '../../core/stats.js';
import type { Answer, Case, Target } from '../../core/types.js';
import { got, parseSpec, type TargetSpec } from '../registry.js';
import { NODE_LLAMA_CPP_VERSION } from './binding.js';
import { LlamaEngine, type LlamaEngineOptions, type LlamaGeneration } from './engine.js';
import { firstCaseCollapse } from './threads.js';

/** `max_tokens` when none is configured: a letter for multiple choice, short facts for the router suite, else writing. */
export function defaultMaxTokens(c: Pick<Case, 'choices' | 'dataset'>): number {
  if (c.choices && c.choices.length > 0) return 16;
  if (c.dataset === 'router') return 64;
  return 256;
}

function int(min: number) {
  const error = got(`an integer >= ${min}`);
  return z.number(error).int(error).min(min, error).optional();
}

const NEED_MODEL = { error: 'the llamacpp target needs a GGUF file (--model-path FILE)' };

/** Settings of the `llamacpp` target (flat keys of its TargetSpec); the engine's are passed to it as they are. */
const llamaCppSpecSchema = z.object({
  model_path: z.string(NEED_MODEL).refine((p) => p.trim() !== '', NEED_MODEL),
  threads: int(1),
  ctx: int(1),
  gpu_layers: int(0),
  /** Tokens to generate at most; absent: {@link defaultMaxTokens} per case. */
  max_tokens: int(1),
  /** Default 42. */
  seed: int(0),
  /** Default 0 (greedy). */
  temperature: z.number(got('a number >= 0')).min(0, got('a number >= 0')).optional(),
  module: z.string({ error: 'must be a string' }).optional(),
});

/** The spec's settings, and where the CPU files are read (tests). */
type LlamaCppTargetOptions = z.infer<typeof llamaCppSpecSchema> & Pick<LlamaEngineOptions, 'cpu_root'>;

/** Validates a TargetSpec for `llamacpp`; throws E_CONFIG naming the key. */
export function llamaCppOptionsFromSpec(spec: TargetSpec): LlamaCppTargetOptions {
  return parseSpec(llamaCppSpecSchema, spec);
}

/** A GGUF model run in this process by llama.cpp; it loads once, at creation, never inside a case's window. */
export async function createLlamaCppTarget(opts: LlamaCppTargetOptions): Promise<Target> {
  const engine = new LlamaEngine(opts);

  await engine.load();
  const temperature = opts.temperature ?? 0;
  const seed = opts.seed ?? 42;
  // With more than one thread, what one thread decodes is the reference the first case is checked against.
  const probe_tok_s = engine.threads.threads > 1 ? await engine.probeOneThread() : null;
  let first_case_tok_s: number | null | undefined;
  let collapse: string | null = null;
  return {
    id: `llamacpp:${opts.model_path.split(/[\\/]/).pop()}`,
    kind: 'llamacpp',
    async answer(req): Promise<Answer> {
      const max_tokens = opts.max_tokens ?? defaultMaxTokens(req.case);
      const g = await engine.generate(req.prompt, { max_tokens, temperature, seed }, req.signal);
      if (first_case_tok_s === undefined && g.decode_evals > 0 && g.decode_ms > 0) {
        first_case_tok_s = g.decode_evals / (g.decode_ms / 1000);
        collapse = firstCaseCollapse(first_case_tok_s, probe_tok_s, g.threads_used);
      }
      return answerOf(g, engine.load_ms, max_tokens);
    },
    warnings: () => (collapse === null ? [] : [collapse]),
    describe: () => ({
      kind: 'llamacpp',
      library: `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`,
      model_path: opts.model_path,
      threads: engine.threads.threads,
      threads_source: engine.threads.threads_source,
      thread_check: {
        one_thread_probe_tok_s: probe_tok_s === null ? null : round(probe_tok_s, 3),
        first_case_decode_tok_s: first_case_tok_s === undefined || first_case_tok_s === null ? null : round(first_case_tok_s, 3),
        warning: collapse,
      },
      temperature,
      seed,
      max_tokens: opts.max_tokens ?? 'per suite: 16 multiple-choice, 64 router, 256 otherwise',
      model_load_ms: round(engine.load_ms, 3),
      ...engine.info,
    }),
    close: () => engine.unload(),
  };
}

/** The Answer for one generation: usage and TTFT/TPOT at the top, the library's counters in `meta.llamacpp`. */
function answerOf(g: LlamaGeneration, model_load_ms: number, max_tokens: number): Answer {
  const last = g.token_times_ms[g.token_times_ms.length - 1];
  return {
    text: g.text,
    usage: { prompt_tokens: g.prompt_tokens, completion_tokens: g.decode_tokens },
    ttft_ms: g.ttft_ms === null ? null : round(g.ttft_ms, 3),
    tpot_ms: g.ttft_ms !== null && last !== undefined && g.decode_tokens > 1 ? round((last - g.ttft_ms) / (g.decode_tokens - 1), 3) : null,
    // Nothing is billed; energy comes from the run's meter (the process it measures is this inference).
    cost_usd: 0,
    meta: {
      llamacpp: {
        model_load_ms: round(model_load_ms, 3),
        prompt_tokens: g.prompt_tokens,
        prompt_tokens_evaluated: g.prompt_tokens_evaluated,
        prompt_tokens_reused: g.prompt_tokens_reused,
        // A reused KV prefix is a cache hit, not prefill (seed 004 rule 2): its rate is labelled, never a prefill rate.
        prefill_kind: g.prompt_tokens_reused > 0 ? 'cached-prefix' : 'fresh',
        prefill_ms: round(g.prefill_ms, 3),
        decode_tokens: g.decode_tokens,
        decode_evals: g.decode_evals,
        decode_ms: round(g.decode_ms, 3),
        decode_tok_s: g.decode_ms > 0 ? round(g.decode_evals / (g.decode_ms / 1000), 3) : null,
        e2e_ms: round(g.e2e_ms, 3),
        token_times_ms: g.token_times_ms.map((t) => round(t, 3)),
        threads_used: g.threads_used,
        max_tokens,
        stop_reason: g.stop_reason,
      },
    },
  };
}
