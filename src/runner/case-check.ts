import { JoulebenchError } from '../core/errors.js';

type Rule = (v: unknown) => boolean;

const str: Rule = (v) => typeof v === 'string';
/** A number JSON can hold (not NaN, not ±Infinity, which JSON.parse gives for 1e400). */
export const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

const num: Rule = isFiniteNumber;
const bool: Rule = (v) => typeof v === 'boolean';
const orNull =
  (rule: Rule): Rule =>
  (v) =>
    v === null || rule(v);
const object: Rule = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

const error: Rule = (v) => {
  if (v === null) return true;
  if (!object(v)) return false;
  const e = v as Record<string, unknown>;
  return str(e.code) && str(e.message) && (e.status === undefined || num(e.status));
};
const traceStep: Rule = (v) => object(v) && str((v as Record<string, unknown>).stage) && bool((v as Record<string, unknown>).hit) && orNull(num)((v as Record<string, unknown>).energy_uj);
const message: Rule = (v) => object(v) && str((v as Record<string, unknown>).role) && str((v as Record<string, unknown>).content);
const range: Rule = (v) => object(v) && num((v as Record<string, unknown>).low) && num((v as Record<string, unknown>).high);

/** Every key of a case line the report reads, with what it must hold (CaseResult in core/types.ts). */
const REQUIRED: readonly [string, Rule, string][] = [
  ['case_id', str, 'a string'],
  ['dataset', str, 'a string'],
  ['response', orNull(str), 'a string or null'],
  ['stage', orNull(str), 'a string or null'],
  ['expected', orNull(str), 'a string or null'],
  ['passed', orNull(bool), 'true, false or null'],
  ['score', orNull(num), 'a number or null'],
  ['weight', num, 'a number'],
  ['joules', orNull(num), 'a number or null'],
  ['energy_source', str, 'a string'],
  ['below_floor', bool, 'true or false'],
  ['latency_ms', num, 'a number'],
  ['ttft_ms', orNull(num), 'a number or null'],
  ['tpot_ms', orNull(num), 'a number or null'],
  ['prompt_tokens', orNull(num), 'a number or null'],
  ['completion_tokens', orNull(num), 'a number or null'],
  ['cost_usd', orNull(num), 'a number or null'],
  ['attempts', num, 'a number'],
  ['retry_overhead_ms', num, 'a number'],
  ['error', error, 'null or {code, message} strings (and a numeric status)'],
];

const OPTIONAL: readonly [string, Rule, string][] = [
  ['parsed', orNull(str), 'a string or null'],
  ['cached_prompt_tokens', num, 'a number'],
  ['reasoning_tokens', num, 'a number'],
  ['energy_invalid', str, 'a string'],
  ['by_domain', object, 'an object'],
  ['itl_ms', (v) => Array.isArray(v) && v.every(num), 'a list of numbers'],
  ['joules_range', range, 'a {low, high} pair of numbers'],
  ['trace', (v) => Array.isArray(v) && v.every(traceStep), 'a list of {stage, hit, energy_uj}'],
  ['meta', object, 'an object'],
  ['turns', (v) => Array.isArray(v) && v.every(object), 'a list of objects'],
  ['prompt', (v) => str(v) || (Array.isArray(v) && v.every(message)), 'a string or a list of {role, content} strings'],
];

/**
 * A parsed case line holds what the report reads, each of its type (a string `"1"` in `cost_usd` would be
 * summed as text), or an error naming the file, line and key. Only types are checked, not ranges.
 */
export function checkCaseLine(r: Record<string, unknown>, path: string, n: number): void {
  for (const [key, rule, what] of REQUIRED) if (!rule(r[key])) refuse(r, key, what, path, n);
  for (const [key, rule, what] of OPTIONAL) if (r[key] !== undefined && !rule(r[key])) refuse(r, key, what, path, n);
}

function refuse(r: Record<string, unknown>, key: string, what: string, path: string, n: number): never {
  const id = typeof r.case_id === 'string' ? ` (case ${JSON.stringify(r.case_id.slice(0, 80))})` : '';
  const v = r[key];
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would write as null: say what it is.
  const found = v === undefined ? 'missing' : typeof v === 'number' ? String(v) : (JSON.stringify(v)?.slice(0, 40) ?? typeof v);
  throw new JoulebenchError('E_RESULTS', `${path}: line ${n}${id}: ${key} is ${found}, not ${what}`);
}
