import type { z } from 'zod';
import { describeConfigIssue } from '../../config/load.js';
import { energyModelSchema, retrySchema, tokenPricesSchema } from '../../config/schema.js';
import { MAX_TIMER_S } from '../../core/bounds.js';
import type { EnergyModelConfig } from '../../energy-model/api-model.js';
import { JoulebenchError } from '../../core/errors.js';
import type { Target } from '../../core/types.js';
import type { TargetSpec } from '../registry.js';
import type { RetryPolicy } from '../retry.js';
import type { Prices } from './cost.js';
import { OpenAITarget, type OpenAITargetOptions } from './target.js';

/** Builds an `openai` target from a TargetSpec (CLI flags and config merged); missing or mistyped keys are E_CONFIG. */
export function createOpenAITargetFromSpec(spec: TargetSpec): Target {
  const str = (k: string): string | undefined => {
    const v = spec[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw new JoulebenchError('E_CONFIG', `target.${k} must be a non-empty string`);
    return v;
  };
  const endpoint = str('endpoint');
  const model = str('model');
  if (!endpoint) throw new JoulebenchError('E_CONFIG', 'target.endpoint is required for an openai target (config target.endpoint or --endpoint URL)');
  if (!model) throw new JoulebenchError('E_CONFIG', 'target.model is required for an openai target (config target.model or --model NAME)');
  const o: OpenAITargetOptions = { endpoint, model };
  const apiKey = str('api_key');
  if (apiKey) o.apiKey = apiKey;
  const ref = str('credentials_ref');
  if (ref) o.credentials_ref = ref;
  if (spec.max_tokens !== undefined) o.max_tokens = posInt(spec.max_tokens, 'target.max_tokens');
  if (spec.ignore_eos !== undefined) {
    if (typeof spec.ignore_eos !== 'boolean') throw new JoulebenchError('E_CONFIG', 'target.ignore_eos must be true or false');
    o.ignore_eos = spec.ignore_eos;
  }
  if (spec.max_reply_bytes !== undefined) o.max_reply_bytes = posInt(spec.max_reply_bytes, 'target.max_reply_bytes');
  if (spec.stream !== undefined) {
    if (typeof spec.stream !== 'boolean') throw new JoulebenchError('E_CONFIG', 'target.stream must be true or false');
    o.stream = spec.stream;
  }
  if (spec.request_timeout_s !== undefined) {
    const t = spec.request_timeout_s;
    if (typeof t !== 'number' || !(t > 0) || !Number.isFinite(t)) throw new JoulebenchError('E_CONFIG', 'timeouts.request_s must be > 0');
    if (t < 0.001 || t > MAX_TIMER_S) throw new JoulebenchError('E_CONFIG', `timeouts.request_s must be from 0.001 to ${MAX_TIMER_S} s (a Node.js timer holds 1 to 2^31−1 ms)`);
    o.request_timeout_s = t;
  }
  if (spec.retry !== undefined) o.retry = checked(retrySchema, spec.retry, 'params.retry') as RetryPolicy;
  if (spec.prices !== undefined) o.prices = checked(tokenPricesSchema, spec.prices, 'prices') as Prices;
  if (spec.energy_model !== undefined) o.energy_model = checked(energyModelSchema, spec.energy_model, 'target.energy_model') as EnergyModelConfig;
  return new OpenAITarget(o);
}

function posInt(v: unknown, key: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new JoulebenchError('E_CONFIG', `${key} must be an integer >= 1`);
  return v;
}

/** Library callers pass these blocks directly: the same schema and one-line message as the config file. */
function checked(schema: z.ZodType, value: unknown, key: string): unknown {
  const r = schema.safeParse(value);
  if (!r.success) {
    const sep = r.error.issues[0]?.path.length ? '.' : ' ';
    throw new JoulebenchError('E_CONFIG', `${key}${sep}${describeConfigIssue(r.error, value)}`);
  }
  return r.data;
}
