import { dirname, isAbsolute, resolve } from 'node:path';
import { parseYaml } from '../yaml.js';
import type { z } from 'zod';
import { JoulebenchError } from '../core/errors.js';
import { configSchema, targetSchema, type RunConfig } from './schema.js';
import { TARGETS } from '../targets/registry.js';
import { readTextFile } from '../read-text.js';
import { cut, escapeControls, QUOTE_MAX_CHARS } from '../core/one-line.js';
import { checkEndpoint } from '../targets/openai/endpoint.js';

/** A loaded config: validated values, with file paths in it made absolute against the file's folder. */
export interface LoadedConfig {
  path: string;
  config: RunConfig;
  /** The target kind, from `target.kind` or seed 003's `target.mode`; undefined when neither is set. */
  kind: string | undefined;
  /** A kind's own settings beyond the common keys (`cache_capacity`, `model_path`, `num_thread`…), as a sweep arm takes them. */
  target_options?: Record<string, unknown>;
}

/** Kinds whose every key is in the schema: an unknown key there is a typo, refused. */
const FULLY_DESCRIBED = new Set(['openai', 'replay', 'mock']);

/** Reads and validates a YAML run config: every problem is E_CONFIG naming the file and key; nothing is clamped. */
export function loadConfig(path: string): LoadedConfig {
  const text = readTextFile(path, 'E_CONFIG', { kind: 'config' });
  let raw: unknown;
  try {
    // logLevel error: a YAML warning is never printed as a line of its own.
    raw = parseYaml(text, { logLevel: 'error' });
  } catch (e) {
    throw new JoulebenchError('E_CONFIG', `${path}: not valid YAML (${((e as Error).message.split('\n')[0] ?? '').trim().replace(/:$/, '')})`);
  }
  return parseConfig(raw ?? {}, path);
}

/** Validates an already-parsed config object (`where` names it in messages). */
export function parseConfig(raw: unknown, where: string): LoadedConfig {
  const { raw: checked, options } = splitTargetOptions(raw);
  const parsed = configSchema.safeParse(checked);
  if (!parsed.success) throw new JoulebenchError('E_CONFIG', `${where}: ${describeConfigIssue(parsed.error, raw)}`);
  const config = parsed.data;
  const t = config.target;
  const fromMode = t?.mode === 'mock' ? (t.answers !== undefined || t.kind === 'replay' ? 'replay' : 'mock') : t?.mode === 'runtime' ? 'openai' : undefined;
  if (t?.kind && fromMode && t.kind !== fromMode) {
    throw new JoulebenchError('E_CONFIG', `${where}: target.mode "${t.mode}" conflicts with target.kind "${t.kind}"`);
  }
  // Checked here, where the file is known, so the message names it like every other key.
  if (t?.endpoint !== undefined) checkEndpoint(t.endpoint, `${where}: target.endpoint`);
  const base = dirname(where);
  const abs = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  if (t?.answers) t.answers = abs(t.answers);
  if (config.params?.data) config.params.data = abs(config.params.data);
  if (config.judge?.cache) config.judge.cache = abs(config.judge.cache);
  if (config.judge?.answers) config.judge.answers = abs(config.judge.answers);
  if (config.judge?.prompts && config.judge.prompts !== 'builtin') config.judge.prompts = abs(config.judge.prompts);
  return { path: where, config, kind: t?.kind ?? fromMode, ...(options ? { target_options: options } : {}) };
}

/** A target of a kind with settings of its own (cascade, ollama, llamacpp…): keys the schema does not name go to the target, as in a sweep arm. */
function splitTargetOptions(raw: unknown): { raw: unknown; options?: Record<string, unknown> } {
  const t = (raw as { target?: unknown } | null)?.target;
  if (t === null || typeof t !== 'object' || Array.isArray(t)) return { raw };
  const kind = (t as { kind?: unknown }).kind;
  if (typeof kind !== 'string' || FULLY_DESCRIBED.has(kind) || !Object.hasOwn(TARGETS, kind)) return { raw };
  const known = new Set(Object.keys(targetSchema.shape));
  const entries = Object.entries(t);
  const options = Object.fromEntries(entries.filter(([k]) => !known.has(k)));
  if (Object.keys(options).length === 0) return { raw };
  return { raw: { ...(raw as object), target: Object.fromEntries(entries.filter(([k]) => known.has(k))) }, options };
}

/** `params.retry.max_attempts must be >= 1`: the dotted key, then what is wrong. */
export function describeConfigIssue(error: z.ZodError, raw: unknown): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid config';
  const key = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys?: string[] }).keys ?? [];
    return keys.map((k) => cut(escapeControls(key ? `${key}.${k}` : k), QUOTE_MAX_CHARS)).join(', ') + ': unknown key';
  }
  let message = issue.message;
  if (issue.code === 'invalid_type' && valueAt(raw, issue.path) === undefined) message = 'is required';
  if (issue.code === 'invalid_type' && key === '') message = 'must be a mapping of keys';
  return key ? `${key} ${message}` : message;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}
