import { parseYaml } from '../yaml.js';
import { z } from 'zod';
import { canonicalJson, digestOf } from '../core/canonical.js';
import { JoulebenchError } from '../core/errors.js';
import { MAX_CONCURRENCY, MAX_REPEAT, MAX_WARMUP } from '../core/bounds.js';
import { maxTokens } from '../config/schema.js';
import { describeConfigIssue } from '../config/load.js';
import { readTextFile } from '../read-text.js';
import type { SessionSpec } from '../session/spec.js';
import { TARGETS } from '../targets/registry.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._=-]*$/;
const scalar = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' });
const matrixSchema = z.record(z.string(), z.array(scalar, { error: 'must be a list of values' }).min(1, 'must list at least one value'), { error: 'must be a mapping of key: [values]' });

/** A whole number from `min` to `max` (docs/sweeps.md "Bounds"). */
const count = (min: number, max: number) =>
  z.number({ error: 'must be a number' }).int('must be an integer').min(min, `must be >= ${min}`).max(max, `must be <= ${max}`);

const clusterSchema = z.enum(['question', 'subject'], { error: 'must be "question" or "subject"' });

/** One arm as a plan writes it: a target spec as in `run --config`, with a name. Unknown keys go to the target. */
const armSchema = z.looseObject({
  name: z.string({ error: 'must be a string' }).regex(NAME, 'must be letters, digits, . _ = - (it names a folder)'),
  kind: z.string({ error: 'must be a string' }).refine((k) => Object.hasOwn(TARGETS, k), { message: `must be one of ${Object.keys(TARGETS).join(', ')}` }),
  endpoint: z.string().optional(),
  model: z.string().optional(),
  credentials_ref: z.string().optional(),
  max_tokens: maxTokens().optional(),
  stream: z.boolean().optional(),
  answers: z.string().optional(),
  base_url: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  prices: z.record(z.string(), z.unknown()).optional(),
  timeouts: z.record(z.string(), z.unknown()).optional(),
  meter: z.string().optional(),
  meter_options: z.record(z.string(), z.unknown()).optional(),
  warmup: count(0, MAX_WARMUP).optional(),
  repeat: count(1, MAX_REPEAT).optional(),
  concurrency: count(1, MAX_CONCURRENCY).optional(),
  /** As `run --cluster`: the arm's intervals resample questions or subjects. */
  cluster: clusterSchema.optional(),
  matrix: matrixSchema.optional(),
  /** Labels a queue worker must have to run this arm (`sweep --queue`), e.g. {gpu: h100}. */
  where: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/)).optional(),
});

const planSchema = z.strictObject({
  name: z.string({ error: 'must be a string' }).regex(NAME, 'must be letters, digits, . _ = - (it names a folder)'),
  suites: z.array(z.string({ error: 'must be a list of suite names or files' }).min(1), { error: 'must be a list of suite names or files' }).min(1, 'must name at least one suite'),
  arms: z.array(armSchema, { error: 'must be a list of arms' }).min(1, 'must list at least one arm'),
  matrix: matrixSchema.optional(),
  baseline: z.string({ error: 'must be a string (an arm name)' }).optional(),
  /** Every arm's `cluster` unless the arm sets its own. */
  cluster: clusterSchema.optional(),
});

/** An arm after matrix expansion (no `matrix` key left); keys the schema does not name go to the target. */
export type PlanArm = z.infer<typeof armSchema> & { matrix?: never };

/** A plan with its matrices expanded: every arm named and concrete. */
export interface ExpandedPlan {
  name: string;
  suites: string[];
  arms: PlanArm[];
  baseline: string | null;
}

/** Reads and expands a plan file; every problem is one line naming the file and key (E_CONFIG). */
export function loadPlan(path: string): ExpandedPlan {
  const text = readTextFile(path, 'E_CONFIG');
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new JoulebenchError('E_CONFIG', `${path}: not valid YAML (${((e as Error).message.split('\n')[0] ?? '').trim()})`);
  }
  return parsePlan(raw ?? {}, path);
}

/** Validates and expands a parsed plan (`where` names it in messages). */
export function parsePlan(raw: unknown, where: string): ExpandedPlan {
  const parsed = planSchema.safeParse(raw);
  if (!parsed.success) throw new JoulebenchError('E_CONFIG', `${where}: ${describeConfigIssue(parsed.error, raw)}`);
  const p = parsed.data;
  const arms: PlanArm[] = [];
  p.arms.forEach((arm, i) => {
    const { matrix, ...base } = arm as typeof arm & { matrix?: Record<string, (string | number | boolean)[]> };
    const keys = { ...(p.matrix ?? {}), ...(matrix ?? {}) };
    for (const k of Object.keys(keys)) {
      if (k === 'name' || k === 'matrix') throw new JoulebenchError('E_CONFIG', `${where}: matrix.${k}: cannot vary the ${k}`);
    }
    for (const combo of crossProduct(keys)) {
      const entries = Object.entries(combo);
      const name = entries.length === 0 ? base.name : `${base.name}-${entries.map(([k, v]) => `${k}=${String(v).replace(/[^A-Za-z0-9._-]+/g, '_')}`).join('-')}`;
      const expanded = structuredClone({ ...(p.cluster !== undefined ? { cluster: p.cluster } : {}), ...base, name }) as PlanArm;
      // A dotted key sets a nested value: `neural.energy_j: [20, 50]`.
      for (const [k, v] of entries) setPath(expanded, k.split('.'), v);
      const again = armSchema.safeParse(expanded);
      if (!again.success) throw new JoulebenchError('E_CONFIG', `${where}: arms[${i}] (${name}): ${describeConfigIssue(again.error, expanded)}`);
      arms.push(expanded);
    }
  });
  const seen = new Set<string>();
  for (const a of arms) {
    if (seen.has(a.name)) throw new JoulebenchError('E_CONFIG', `${where}: arms: two arms are named "${a.name}"`);
    seen.add(a.name);
  }
  if (p.baseline !== undefined && !seen.has(p.baseline)) {
    throw new JoulebenchError('E_CONFIG', `${where}: baseline: no arm named "${p.baseline}" (arms: ${[...seen].join(', ')})`);
  }
  return { name: p.name, suites: p.suites, arms, baseline: p.baseline ?? null };
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let o = obj;
  for (const k of path.slice(0, -1)) {
    const next = o[k];
    if (next === undefined) o[k] = {};
    else if (next === null || typeof next !== 'object' || Array.isArray(next)) throw new JoulebenchError('E_CONFIG', `matrix.${path.join('.')}: ${k} is not a mapping`);
    o = o[k] as Record<string, unknown>;
  }
  o[path[path.length - 1]!] = value;
}

/** Every combination of the matrix's values, keys in the order written. One empty combination for no keys. */
export function crossProduct(matrix: Record<string, readonly (string | number | boolean)[]>): Record<string, string | number | boolean>[] {
  let out: Record<string, string | number | boolean>[] = [{}];
  for (const [k, values] of Object.entries(matrix)) out = out.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  return out;
}

/** The plan's digest: what a resumed sweep must match. */
export function planDigest(plan: ExpandedPlan): string {
  return digestOf(plan);
}

/** Dotted keys whose values differ between two expanded plans (`arms[1].model`, `suites`). */
export function planDifferences(a: unknown, b: unknown, at = ''): string[] {
  if (canonicalJson(a) === canonicalJson(b)) return [];
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((x, i) => planDifferences(x, b[i], `${at}[${i}]`));
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => planDifferences(a[k], b[k], at ? `${at}.${k}` : k));
  }
  return [at || '(the whole plan)'];
}

const CONFIG_TARGET_KEYS = ['endpoint', 'model', 'credentials_ref', 'max_tokens', 'stream', 'answers'] as const;
const SESSION_KEYS = new Set(['name', 'kind', 'where', 'params', 'prices', 'timeouts', 'meter', 'meter_options', 'warmup', 'repeat', 'concurrency', 'cluster', 'base_url', ...CONFIG_TARGET_KEYS]);

/**
 * The session spec of one arm × suite (without paths). openai and replay arms become an inline config
 * (as `run --config` would read it); ollama takes model and base_url; every other key goes to the target.
 */
export function armSessionSpec(arm: PlanArm, suite: string, where: string): SessionSpec {
  const spec: SessionSpec = { suite };
  const viaConfig = arm.kind === 'openai' || arm.kind === 'replay';
  const target: Record<string, unknown> = {};
  if (viaConfig) {
    target.kind = arm.kind;
    for (const k of CONFIG_TARGET_KEYS) if (arm[k] !== undefined) target[k] = arm[k];
  } else {
    spec.target = arm.kind;
    if (arm.model !== undefined) spec.model = arm.model;
    if (arm.base_url !== undefined) spec.baseUrl = arm.base_url;
  }
  const config: Record<string, unknown> = {};
  if (Object.keys(target).length > 0) config.target = target;
  for (const k of ['params', 'prices', 'timeouts'] as const) if (arm[k] !== undefined) config[k] = arm[k];
  if (Object.keys(config).length > 0) spec.config = { where: `${where}: arm ${arm.name}`, config };
  for (const k of ['meter', 'meter_options', 'warmup', 'repeat', 'concurrency', 'cluster'] as const) {
    if (arm[k] !== undefined) Object.assign(spec, { [k]: arm[k] });
  }
  const options = Object.fromEntries(Object.entries(arm).filter(([k]) => !SESSION_KEYS.has(k)));
  if (Object.keys(options).length > 0) spec.target_options = options;
  return spec;
}
