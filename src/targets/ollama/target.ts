import { z } from 'zod';
import { round } from '../../core/stats.js';
import { redactQuery } from '../openai/redact.js';
import type { Answer, Target } from '../../core/types.js';
import { got, parseSpec, type TargetSpec } from '../registry.js';
import { DEFAULT_OLLAMA_URL, OllamaClient, type OllamaOptions } from './client.js';

const NEED_MODEL = { error: 'the ollama target needs a model name (--model)' };
const count = z.number(got('an integer >= 0')).int(got('an integer >= 0'));

/** Settings of the `ollama` target (flat keys of its TargetSpec). */
const ollamaSpecSchema = z.object({
  model: z.string(NEED_MODEL).refine((m) => m.trim() !== '', NEED_MODEL),
  /** Default `http://127.0.0.1:11434`. */
  base_url: z.string(got('an http(s) URL')).regex(/^https?:\/\/[^\s]+$/, got('an http(s) URL')).optional(),
  /** Which native endpoint to use; default `chat`. */
  api: z.enum(['chat', 'generate'], { error: 'must be "chat" or "generate"' }).optional(),
  num_thread: count.min(0, got('an integer >= 0')).optional(),
  num_ctx: count.min(0, got('an integer >= 0')).optional(),
  seed: count.optional(),
  temperature: z.number(got('a number >= 0')).min(0, got('a number >= 0')).optional(),
  num_predict: count.min(0, got('an integer >= 0')).optional(),
  /** Passed as Ollama's `keep_alive` when given (e.g. "5m", 0). */
  keep_alive: z.union([z.string(), z.number()], { error: 'must be a duration string or a number of seconds' }).optional(),
  /** Per-request timeout, ms; default 600 000. */
  timeout_ms: z.number({ error: 'must be a number > 0' }).gt(0, 'must be a number > 0').optional(),
});

export type OllamaTargetOptions = z.infer<typeof ollamaSpecSchema>;

const OPTION_KEYS = ['num_thread', 'num_ctx', 'seed', 'temperature', 'num_predict'] as const;

/** Validates a TargetSpec for `ollama`; throws E_CONFIG naming the key. */
export function ollamaOptionsFromSpec(spec: TargetSpec): OllamaTargetOptions {
  return parseSpec(ollamaSpecSchema, spec);
}

/** A model served by Ollama's native API: its timings (ns) in `meta.ollama`, client-side TTFT; energy from the run's meter. */
export function createOllamaTarget(opts: OllamaTargetOptions): Target {
  const base_url = opts.base_url ?? DEFAULT_OLLAMA_URL;
  const api = opts.api ?? 'chat';
  const client = new OllamaClient(base_url, opts.timeout_ms ?? 600_000);
  const options: OllamaOptions = {};
  for (const key of OPTION_KEYS) if (opts[key] !== undefined) options[key] = opts[key];
  return {
    id: `ollama:${opts.model}`,
    kind: 'ollama',
    // /api/chat takes a conversation; /api/generate takes one prompt (multi-turn cases are then joined with `Follow-up:`).
    conversational: api === 'chat',
    async answer(req): Promise<Answer> {
      const body: Record<string, unknown> =
        api === 'chat'
          ? { model: opts.model, messages: req.messages ?? [{ role: 'user', content: req.prompt }], options }
          : { model: opts.model, prompt: req.prompt, options };
      if (opts.keep_alive !== undefined) body.keep_alive = opts.keep_alive;
      const r = await client.stream(api === 'chat' ? '/api/chat' : '/api/generate', body, req.signal);
      const t = r.timings;
      return {
        text: r.text,
        usage: { prompt_tokens: t.prompt_eval_count, completion_tokens: t.eval_count },
        ttft_ms: r.ttft_ms === null ? null : round(r.ttft_ms, 3),
        tpot_ms:
          r.ttft_ms !== null && t.eval_count !== null && t.eval_count > 1 ? round((r.e2e_ms - r.ttft_ms) / (t.eval_count - 1), 3) : null,
        meta: {
          ollama: t,
          done_reason: r.done_reason,
          decode_tok_s: ratePerS(t.eval_count, t.eval_duration_ns),
          // A repeated prompt is served from Ollama's prefix cache: this is not a prefill rate (seed 004 rule 2).
          cached_prefix_or_cold_prefill_tok_s: ratePerS(t.prompt_eval_count, t.prompt_eval_duration_ns),
        },
      };
    },
    describe: () => ({
      kind: 'ollama',
      model: opts.model,
      base_url: redactQuery(base_url),
      api,
      options,
      keep_alive: opts.keep_alive ?? null,
      multi_turn: api === 'chat' ? 'conversation' : 'follow-up',
    }),
  };
}

/** tokens ÷ (ns ÷ 1e9); `null` when either is unknown or the duration is 0. */
export function ratePerS(count: number | null, duration_ns: number | null): number | null {
  if (count === null || duration_ns === null || !(duration_ns > 0)) return null;
  return count / (duration_ns / 1e9);
}
