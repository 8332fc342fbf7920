import { z } from 'zod';
import { TARGETS } from '../targets/registry.js';
import { MAX_ATTEMPTS, MAX_CASE_LIMIT, MAX_TIMER_S, MAX_TOKENS, MAX_USD_PER_MTOK, timerLimitText } from '../core/bounds.js';

const number = () => z.number({ error: 'must be a number' });
const nonNegative = () => number().finite('must be finite').min(0, 'must be >= 0');
const positive = () => number().finite('must be finite').gt(0, 'must be > 0');
/** An integer >= 1. */
const count = () => number().int('must be an integer').min(1, 'must be >= 1');
const text = () => z.string({ error: 'must be a string' }).min(1, 'must not be empty');
const bool = () => z.boolean({ error: 'must be true or false' });
/** Seconds that end up in a timer: bounded by Node's 2^31−1 ms. */
const timerSeconds = () => nonNegative().max(MAX_TIMER_S, timerLimitText('s'));
/** Tokens one answer may generate. */
export const maxTokens = () => count().max(MAX_TOKENS, `must be <= ${MAX_TOKENS}`);
/** `env:NAME`: a key is named, never written in a config. */
const credentialsRef = () => z.string({ error: 'must be a string' }).regex(/^env:[A-Za-z_][A-Za-z0-9_]*$/, 'must be env:NAME (the key is read from that environment variable)');
const usdPerMtok = () => nonNegative().max(MAX_USD_PER_MTOK, `must be <= ${MAX_USD_PER_MTOK}`);

const backoff = { backoff_base_s: timerSeconds().default(0.2), backoff_max_s: timerSeconds().default(5.0) };

/** `params.retry` (seed 003): the measured-call retry policy. Present = enabled. */
export const retrySchema = z.object({ max_attempts: count().max(MAX_ATTEMPTS, `must be <= ${MAX_ATTEMPTS}`), ...backoff }).strict();

/** `target.retries` (seed 003): accepted and validated so seed configs load; it never retries a measured call (`params.retry` does). */
const controlRetrySchema = z.object({ max_attempts: count().default(3), ...backoff }).strict();

/** A number, or a `[low, high]` range with low <= high (a figure known only within bounds). */
const numberOrRange = (scalar: z.ZodNumber, bound: z.ZodNumber, error: string) =>
  z.union([scalar, z.tuple([bound, bound]).refine(([lo, hi]) => lo <= hi, 'must be [low, high] with low <= high')], { error });

const paramsOrRange = numberOrRange(positive(), z.number().finite().gt(0), 'must be a number or [low, high]');

/** `target.energy_model`: overrides for the modelled energy of a remote endpoint (model:api, EcoLogits). */
export const energyModelSchema = z
  .object({
    enabled: bool().optional(),
    active_params_b: paramsOrRange.optional(),
    total_params_b: paramsOrRange.optional(),
    pue: numberOrRange(number().finite().min(1, 'must be >= 1'), z.number().finite().min(1), 'must be a number >= 1 or [low, high]').optional(),
    hardware: z.enum(['h100-vllm'], { error: 'must be "h100-vllm" (the only EcoLogits hardware profile)' }).optional(),
  })
  .strict();

export const targetSchema = z
  .object({
    kind: z.string({ error: 'must be a string' }).refine((k) => Object.hasOwn(TARGETS, k), { message: `must be one of ${Object.keys(TARGETS).join(', ')}` }).optional(),
    /** Seed 003: `runtime` = the endpoint (openai), `mock` = replay with `answers`, else the mock target. */
    mode: z.enum(['runtime', 'mock'], { error: 'must be "runtime" or "mock"' }).optional(),
    endpoint: text().optional(),
    model: text().optional(),
    credentials_ref: credentialsRef().optional(),
    max_tokens: maxTokens().optional(),
    stream: bool().optional(),
    /** Cap on one reply's body, bytes (default 4 MiB): a larger reply is cut off and recorded as an error. */
    max_reply_bytes: count().optional(),
    /** Replay: a results JSONL or a fixture of {id, answer}. */
    answers: text().optional(),
    /** A model server's address (ollama). */
    base_url: text().optional(),
    retries: controlRetrySchema.optional(),
    energy_model: energyModelSchema.optional(),
  })
  .strict();

const paramsSchema = z
  .object({
    subjects: z.array(z.string({ error: 'must be a list of strings' }).min(1), { error: 'must be a list of strings' }).optional(),
    limit: count().max(MAX_CASE_LIMIT, `must be <= ${MAX_CASE_LIMIT}`).optional(),
    /** MMLU data path (file or directory); `--data` overrides. */
    data: text().optional(),
    retry: retrySchema.optional(),
    /** MMLU's dataset version label, e.g. `cais-mmlu/sample-v1` (the peer's); default: a content label. */
    suite_version: text().optional(),
  })
  .strict();

const tokenPriceKeys = {
  input_usd_per_mtok: usdPerMtok(),
  output_usd_per_mtok: usdPerMtok(),
  /** Prompt tokens the provider served from its cache (`usage.prompt_tokens_details.cached_tokens`); default: the input price. */
  cached_input_usd_per_mtok: usdPerMtok().optional(),
  /** Reasoning tokens (`usage.completion_tokens_details.reasoning_tokens`); default: the output price. */
  reasoning_usd_per_mtok: usdPerMtok().optional(),
};

/** What a target (or judge) bills per token. */
export const tokenPricesSchema = z.object(tokenPriceKeys).strict();

/** `prices:` of a run: token prices (both or neither), and the local parts: electricity and amortised hardware. */
export const pricesSchema = z
  .object({
    ...tokenPriceKeys,
    input_usd_per_mtok: usdPerMtok().optional(),
    output_usd_per_mtok: usdPerMtok().optional(),
    electricity_usd_per_kwh: nonNegative().optional(),
    hardware_usd_per_hour: nonNegative().optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const token = p.input_usd_per_mtok !== undefined || p.output_usd_per_mtok !== undefined || p.cached_input_usd_per_mtok !== undefined || p.reasoning_usd_per_mtok !== undefined;
    for (const k of ['input_usd_per_mtok', 'output_usd_per_mtok'] as const) {
      if (token && p[k] === undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'is required with any token price' });
    }
    if (!token && p.electricity_usd_per_kwh === undefined && p.hardware_usd_per_hour === undefined) ctx.addIssue({ code: 'custom', path: [], message: 'names no price' });
  });

/** The token prices of a run's `prices:`, or undefined when it sets none. */
export function tokenPricesOf(p: z.infer<typeof pricesSchema> | undefined): z.infer<typeof tokenPricesSchema> | undefined {
  if (p?.input_usd_per_mtok === undefined || p.output_usd_per_mtok === undefined) return undefined;
  const { electricity_usd_per_kwh: _e, hardware_usd_per_hour: _h, ...token } = p;
  return token as z.infer<typeof tokenPricesSchema>;
}

const timeoutsSchema = z
  .object({
    /** Limit on one attempt, request sent to last byte, s. */
    request_s: positive().min(0.001, 'must be >= 0.001 (1 ms, the shortest timer)').max(MAX_TIMER_S, timerLimitText('s')).optional(),
  })
  .strict();

/** `judge:`: any target spec plus the rubric `mode`, the threshold `pass` and the `cache` file (always at temperature 0). */
export const judgeSchema = z
  .object({
    kind: z.string({ error: 'must be a target kind (e.g. openai, ollama)' }).min(1, 'must not be empty'),
    endpoint: text().optional(),
    model: text().optional(),
    credentials_ref: credentialsRef().optional(),
    max_tokens: count().optional(),
    stream: bool().optional(),
    request_timeout_s: positive().optional(),
    prices: tokenPricesSchema.optional(),
    /** Ollama's server address and API (a local judge). */
    base_url: text().optional(),
    api: z.enum(['chat', 'generate'], { error: 'must be "chat" or "generate"' }).optional(),
    num_ctx: count().optional(),
    /** Recorded judge replies (a results JSONL or fixture), for offline tests of a judging set-up. */
    answers: text().optional(),
    mode: z.enum(['single', 'single-reference', 'pairwise'], { error: 'must be "single", "single-reference" or "pairwise"' }).default('single'),
    pass: number().min(1, 'must be >= 1').max(10, 'must be <= 10').optional(),
    cache: text().optional(),
    /** Judge prompts in FastChat's judge_prompts.jsonl form, or `builtin` for joulebench's own. */
    prompts: z.string({ error: 'must be a path or "builtin"' }).min(1, 'must not be empty').optional(),
  })
  .strict();

/** The run config file (YAML): seed 003's keys plus prices, timeouts and an optional judge. */
export const configSchema = z
  .object({
    target: targetSchema.optional(),
    params: paramsSchema.optional(),
    prices: pricesSchema.optional(),
    timeouts: timeoutsSchema.optional(),
    judge: judgeSchema.optional(),
  })
  .strict();

export type JudgeConfig = z.infer<typeof judgeSchema>;

export type RunConfig = z.infer<typeof configSchema>;
