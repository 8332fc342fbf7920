import { z } from 'zod';
import { MAX_TIMER_S, MAX_USD_PER_MTOK, timerLimitText } from '../core/bounds.js';

const nonNegative = () => z.number({ error: 'must be a number' }).finite('must be finite').min(0, 'must be >= 0');
/** Seconds that end up in a timer: bounded by Node's 2^31−1 ms. */
const timerSeconds = () => nonNegative().max(MAX_TIMER_S, timerLimitText('s'));
const usdPerMtok = () => nonNegative().max(MAX_USD_PER_MTOK, `must be <= ${MAX_USD_PER_MTOK}`);

/** `params.retry` (seed 003): the measured-call retry policy. Present = enabled. */
export const retrySchema = z
  .object({
    max_attempts: z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be >= 1'),
    backoff_base_s: timerSeconds().default(0.2),
    backoff_max_s: timerSeconds().default(5.0),
  })
  .strict();

/**
 * `target.retries`: the control plane's retry budget (seed 003). joulebench has no control plane
 * calls today; the block is accepted and validated so seed configs load, and it never retries a
 * measured call — only `params.retry` does.
 */
export const controlRetrySchema = z
  .object({
    max_attempts: z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be >= 1').default(3),
    backoff_base_s: timerSeconds().default(0.2),
    backoff_max_s: timerSeconds().default(5.0),
  })
  .strict();

export const targetSchema = z
  .object({
    kind: z.enum(['openai', 'replay'], { error: 'must be "openai" or "replay"' }).optional(),
    /** Seed 003: `runtime` = the endpoint (openai), `mock` = replay. */
    mode: z.enum(['runtime', 'mock'], { error: 'must be "runtime" or "mock"' }).optional(),
    endpoint: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    model: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    credentials_ref: z
      .string({ error: 'must be a string' })
      .regex(/^env:[A-Za-z_][A-Za-z0-9_]*$/, 'must be env:NAME (the key is read from that environment variable)')
      .optional(),
    max_tokens: z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be >= 1').optional(),
    stream: z.boolean({ error: 'must be true or false' }).optional(),
    /** Cap on one reply's body, bytes (default 4 MiB): a larger reply is cut off and recorded as an error. */
    max_reply_bytes: z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be >= 1').optional(),
    /** Replay: a results JSONL or a fixture of {id, answer}. */
    answers: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    retries: controlRetrySchema.optional(),
  })
  .strict();

export const paramsSchema = z
  .object({
    subjects: z.array(z.string({ error: 'must be a list of strings' }).min(1), { error: 'must be a list of strings' }).optional(),
    limit: z.number({ error: 'must be a number' }).int('must be an integer').min(1, 'must be >= 1').optional(),
    /** MMLU data path (file or directory); `--data` overrides. */
    data: z.string({ error: 'must be a string' }).min(1, 'must not be empty').optional(),
    retry: retrySchema.optional(),
  })
  .strict();

export const pricesSchema = z
  .object({
    input_usd_per_mtok: usdPerMtok(),
    output_usd_per_mtok: usdPerMtok(),
  })
  .strict();

export const timeoutsSchema = z
  .object({
    /** Limit on one attempt, request sent to last byte, s. */
    request_s: z
      .number({ error: 'must be a number' })
      .finite('must be finite')
      .gt(0, 'must be > 0')
      .min(0.001, 'must be >= 0.001 (1 ms, the shortest timer)')
      .max(MAX_TIMER_S, timerLimitText('s'))
      .optional(),
  })
  .strict();

/** The run config file (YAML): seed 003's keys plus prices and timeouts. */
export const configSchema = z
  .object({
    target: targetSchema.optional(),
    params: paramsSchema.optional(),
    prices: pricesSchema.optional(),
    timeouts: timeoutsSchema.optional(),
  })
  .strict();

export type RunConfig = z.infer<typeof configSchema>;
export type RetryConfig = z.infer<typeof retrySchema>;
