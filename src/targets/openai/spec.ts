import { z } from 'zod';
import { describeConfigIssue } from '../../config/load.js';
import { energyModelSchema, retrySchema, tokenPricesSchema } from '../../config/schema.js';
import { MAX_TIMER_S } from '../../core/bounds.js';
import { JoulebenchError } from '../../core/errors.js';
import type { Target } from '../../core/types.js';
import type { TargetSpec } from '../registry.js';
import { OpenAITarget } from './target.js';

const text = z.string({ error: 'must be a non-empty string' }).min(1, 'must be a non-empty string').optional();
const positiveInt = z.number({ error: 'must be an integer >= 1' }).int('must be an integer >= 1').min(1, 'must be an integer >= 1').optional();
const bool = z.boolean({ error: 'must be true or false' }).optional();
const TIMER_RANGE = `must be from 0.001 to ${MAX_TIMER_S} s (a Node.js timer holds 1 to 2^31−1 ms)`;

/** The keys of an `openai` spec; library callers pass the blocks directly, so they get the config file's schema. */
const openaiSpecSchema = z.object({
  /** Base URL, e.g. `http://127.0.0.1:8000/v1`; `/chat/completions` is appended. */
  endpoint: text,
  model: text,
  api_key: text,
  /** Where the key came from (`env:NAME`), for the receipt; never the key. */
  credentials_ref: text,
  /** Default 256. */
  max_tokens: positiveInt,
  /** Sends `ignore_eos: true` (vLLM, SGLang, llama.cpp's server): every reply runs to `max_tokens`. */
  ignore_eos: bool,
  /** Cap on one reply's body, bytes (default 4 MiB); a larger reply is cut off and recorded as an error. */
  max_reply_bytes: positiveInt,
  /** Default true; a server that refuses streaming is asked again plainly. */
  stream: bool,
  /** Per-attempt limit, s (default 120). */
  request_timeout_s: z.number({ error: 'must be > 0' }).gt(0, 'must be > 0').min(0.001, TIMER_RANGE).max(MAX_TIMER_S, TIMER_RANGE).optional(),
  retry: retrySchema.optional(),
  prices: tokenPricesSchema.optional(),
  /** Overrides for the modelled per-request energy (`model:api`); without it, only tabled models get one. */
  energy_model: energyModelSchema.optional(),
});

export type OpenAISpec = z.infer<typeof openaiSpecSchema>;

/** The config key a spec key comes from, where it is not `target.KEY`. */
const CONFIG_KEYS: Record<string, string> = { request_timeout_s: 'timeouts.request_s', retry: 'params.retry', prices: 'prices' };

/** Builds an `openai` target from a TargetSpec (CLI flags and config merged); missing or mistyped keys are E_CONFIG. */
export function createOpenAITargetFromSpec(spec: TargetSpec): Target {
  const r = openaiSpecSchema.safeParse(spec);
  if (!r.success) {
    const head = String(r.error.issues[0]!.path[0]);
    throw new JoulebenchError('E_CONFIG', `${CONFIG_KEYS[head] ?? `target.${head}`}${describeConfigIssue(r.error, spec).slice(head.length)}`);
  }
  const { endpoint, model, api_key, credentials_ref, ...rest } = r.data;
  if (!endpoint) throw new JoulebenchError('E_CONFIG', 'target.endpoint is required for an openai target (config target.endpoint or --endpoint URL)');
  if (!model) throw new JoulebenchError('E_CONFIG', 'target.model is required for an openai target (config target.model or --model NAME)');
  return new OpenAITarget({ endpoint, model, ...(api_key ? { apiKey: api_key } : {}), ...(credentials_ref ? { credentials_ref } : {}), ...rest });
}
