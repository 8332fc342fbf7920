import { fileURLToPath } from 'node:url';
import { JoulebenchError } from '../core/errors.js';
import type { StreamedSuite, Suite } from '../core/types.js';
import type { LoadedConfig } from '../config/load.js';
import { tokenPricesOf } from '../config/schema.js';
import { isBundledSuite, loadSuite } from '../suites/loader.js';
import { isJsonlSuitePath, streamJsonlSuite } from '../suites/jsonl-stream.js';
import type { Selection } from '../suites/select.js';
import { loadMmlu, streamMmlu } from '../suites/mmlu.js';
import { withRetryLabel } from '../suites/retry-label.js';
import { loadMtBench } from '../suites/mt-bench.js';
import { findDefaultModel } from '../targets/llamacpp/default-model.js';
import type { TargetSpec } from '../targets/registry.js';
import { checkEndpoint } from '../targets/openai/endpoint.js';

/** `--suite mmlu` without data: 24 MMLU-format questions written for joulebench (4 subjects × 6, cais/mmlu rows). */
const MMLU_SAMPLE = fileURLToPath(new URL('../../src/suites/data/mmlu-sample.jsonl', import.meta.url));
const MMLU_SAMPLE_VERSION = 'joulebench-mmlu/sample-1';

/** The OpenAI SDK's base URL when neither a flag, the config nor OPENAI_BASE_URL names one. */
const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The settings that pick the suite and the target (`run`'s flags, or a session spec's). */
export interface TargetFlags {
  suite: string;
  target?: string;
  neural?: string;
  endpoint?: string;
  model?: string;
  credentialsRef?: string;
  answers?: string;
  data?: string;
  /** MT-Bench reference answers (FastChat's answer JSONL), with `--suite mt-bench`. */
  references?: string;
  /** Ollama's server address. */
  baseUrl?: string;
  /** The llamacpp target. */
  modelPath?: string;
  threads?: number;
  ctx?: number;
  gpuLayers?: number;
  maxTokens?: number;
}

/**
 * The target spec from flags and an optional config file (flags win; with `--target cascade` the config's
 * `target` is the neural backend). The key `credentials_ref` names is read here and goes only to the target.
 */
export function buildTargetSpec(flags: TargetFlags, cfg: LoadedConfig | null, env: NodeJS.ProcessEnv): TargetSpec {
  // `mode: mock` with --answers given on the command line replays them, as `target.answers` in the config would.
  const kind = flags.target ?? (cfg?.kind === 'mock' && flags.answers ? 'replay' : cfg?.kind) ?? 'cascade';
  const asked = flags.neural ?? (kind === 'cascade' && flags.target !== undefined ? cfg?.kind : undefined);
  // The embedded default: a real model as the neural stage when one was fetched, else the echo backend.
  const defaultModel = kind === 'cascade' && asked === undefined && !cfg ? findDefaultModel(env) : null;
  const neuralKind = asked ?? (defaultModel ? 'llamacpp' : undefined);
  if (flags.neural && kind !== 'cascade') throw new JoulebenchError('E_USAGE', '--neural only applies to --target cascade');
  const leaf = kind === 'cascade' ? neuralKind : kind;
  if ((flags.model !== undefined || flags.baseUrl !== undefined) && leaf === undefined) {
    throw new JoulebenchError('E_USAGE', '--model/--base-url: the reference cascade serves no model; use --neural KIND (e.g. --neural ollama) or --target KIND');
  }
  if ((flags.endpoint || flags.credentialsRef) && leaf !== 'openai') {
    throw new JoulebenchError('E_USAGE', '--endpoint and --credentials-ref apply to --target openai (or --target cascade --neural openai)');
  }
  if (flags.model !== undefined && leaf !== 'openai' && leaf !== 'ollama') {
    throw new JoulebenchError('E_USAGE', `--model applies to a model-serving target (openai, ollama), not to "${leaf}"`);
  }
  if (flags.baseUrl !== undefined && leaf !== 'ollama') throw new JoulebenchError('E_USAGE', '--base-url applies to --target ollama (openai takes --endpoint)');
  if (flags.answers && leaf !== 'replay') throw new JoulebenchError('E_USAGE', '--answers applies to --target replay');
  const llamaFlags = { '--model-path': flags.modelPath, '--threads': flags.threads, '--ctx': flags.ctx, '--gpu-layers': flags.gpuLayers };
  for (const [name, v] of Object.entries(llamaFlags)) {
    if (v !== undefined && leaf !== 'llamacpp') throw new JoulebenchError('E_USAGE', `${name} applies to --target llamacpp (or --target cascade --neural llamacpp)`);
  }
  if (flags.maxTokens !== undefined && leaf !== 'llamacpp' && leaf !== 'openai') {
    throw new JoulebenchError('E_USAGE', '--max-tokens applies to a model target (llamacpp, openai)');
  }
  if (cfg?.config.params?.retry && leaf !== 'openai') {
    throw new JoulebenchError('E_CONFIG', `${cfg.path}: params.retry applies to an openai target (the measured endpoint call), not to "${leaf ?? kind}"`);
  }
  const specFor = (k: string): TargetSpec => {
    if (k === 'openai') return openaiSpec(flags, cfg, env);
    if (k === 'replay') {
      const answers = flags.answers ?? cfg?.config.target?.answers;
      if (!answers && cfg) {
        // Named here, where the file is known (the registry's message cannot say which file).
        throw new JoulebenchError('E_CONFIG', `${cfg.path}: target.answers is required for a replay target (a results JSONL or a fixture of {id, answer}; CLI: --answers FILE)`);
      }
      return answers ? { kind: 'replay', answers } : { kind: 'replay' };
    }
    const t = cfg?.config.target;
    if (k === 'ollama') return { kind: 'ollama', ...defined({ model: flags.model ?? t?.model, base_url: flags.baseUrl ?? t?.base_url }) };
    if (k === 'llamacpp') {
      const { threads, ctx, gpuLayers: gpu_layers } = flags;
      const model_path = flags.modelPath ?? defaultModel ?? undefined;
      return { kind: 'llamacpp', ...defined({ model_path, threads, ctx, gpu_layers, max_tokens: flags.maxTokens ?? t?.max_tokens }) };
    }
    return { kind: k };
  };
  // The config's own settings for its kind go to that target: the cascade, or its neural stage.
  const opts = cfg?.target_options;
  if (kind === 'cascade') {
    const neural = neuralKind ? specFor(neuralKind) : undefined;
    const base: TargetSpec = neural ? { kind, neural } : { kind };
    if (cfg?.kind === 'cascade') return withTargetOptions(base, opts);
    return neural && cfg?.kind === neuralKind ? { kind, neural: withTargetOptions(neural, opts) } : base;
  }
  return cfg?.kind === kind ? withTargetOptions(specFor(kind), opts) : specFor(kind);
}

/** The fields that are given (a key set to undefined would still be a key of the spec). */
function defined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/** The target spec with `options` merged in; a `neural` object merges into the cascade's neural spec. */
export function withTargetOptions(t: TargetSpec, options: Record<string, unknown> | undefined): TargetSpec {
  if (!options) return t;
  const { neural, ...rest } = options;
  const out: TargetSpec = { ...t, ...rest };
  if (neural !== undefined) {
    if (neural === null || typeof neural !== 'object' || Array.isArray(neural)) throw new JoulebenchError('E_CONFIG', 'target.neural must be a mapping');
    const n = neural as Record<string, unknown>;
    const kind = typeof n.kind === 'string' ? n.kind : (t.neural?.kind ?? 'echo');
    out.neural = { ...(t.neural ?? {}), ...n, kind };
  }
  return out;
}

function openaiSpec(flags: TargetFlags, cfg: LoadedConfig | null, env: NodeJS.ProcessEnv): TargetSpec {
  const t = cfg?.config.target ?? {};
  // As the OpenAI SDK resolves them: flag, then config, then OPENAI_BASE_URL, then OpenAI's own API.
  const envBase = env.OPENAI_BASE_URL !== undefined && env.OPENAI_BASE_URL !== '' ? env.OPENAI_BASE_URL : undefined;
  if (flags.endpoint === undefined && t.endpoint === undefined && envBase !== undefined) checkEndpoint(envBase, 'environment OPENAI_BASE_URL');
  const spec: TargetSpec = {
    kind: 'openai',
    ...defined({
      endpoint: flags.endpoint ?? t.endpoint ?? envBase ?? OPENAI_DEFAULT_BASE_URL,
      model: flags.model ?? t.model,
      max_tokens: flags.maxTokens ?? t.max_tokens,
      stream: t.stream,
      max_reply_bytes: t.max_reply_bytes,
      request_timeout_s: cfg?.config.timeouts?.request_s,
      retry: cfg?.config.params?.retry,
      prices: tokenPricesOf(cfg?.config.prices),
      energy_model: t.energy_model,
    }),
  };
  // Named here, where the file is known (the target's own message cannot say which file).
  if (cfg && spec.model === undefined) throw new JoulebenchError('E_CONFIG', `${cfg.path}: target.model is required for an openai target (or --model NAME)`);
  // The key is only ever named (env:OPENAI_API_KEY in the receipt), never written.
  const ref = flags.credentialsRef ?? t.credentials_ref ?? (env.OPENAI_API_KEY ? 'env:OPENAI_API_KEY' : undefined);
  if (ref !== undefined) {
    const m = /^env:([A-Za-z_][A-Za-z0-9_]*)$/.exec(ref);
    const where = flags.credentialsRef ? '--credentials-ref' : t.credentials_ref ? `${cfg?.path}: target.credentials_ref` : 'OPENAI_API_KEY';
    if (!m) throw new JoulebenchError('E_CONFIG', `${where} must be env:NAME`);
    const key = env[m[1]!];
    if (key === undefined || key === '') throw new JoulebenchError('E_CONFIG', `${where}: environment variable ${m[1]} is not set`);
    spec.credentials_ref = ref;
    spec.api_key = key;
  }
  return spec;
}

/**
 * The suite `--suite` names (mmlu from `--data` or `params.data`). With `stream`, a JSONL suite file or MMLU
 * data is checked and digested as a stream, the selection applied; any other suite is in memory, unselected.
 */
export function buildSuite(flags: TargetFlags, cfg: LoadedConfig | null): Suite;
export function buildSuite(flags: TargetFlags, cfg: LoadedConfig | null, stream?: { selection: Selection }): Suite | StreamedSuite;
export function buildSuite(flags: TargetFlags, cfg: LoadedConfig | null, stream?: { selection: Selection }): Suite | StreamedSuite {
  const p = cfg?.config.params;
  // Every suite, not only MMLU: a retried run is relabelled, so its digest differs from a clean one's.
  const relabel = (version: string): string => withRetryLabel(version, p?.retry?.max_attempts);
  if (flags.references !== undefined && flags.suite !== 'mt-bench') throw new JoulebenchError('E_USAGE', '--references applies to --suite mt-bench');
  if (flags.suite !== 'mmlu' && (p?.subjects || p?.limit !== undefined || p?.data)) {
    throw new JoulebenchError('E_CONFIG', `${cfg?.path}: params.subjects, params.limit and params.data apply to --suite mmlu only`);
  }
  if (flags.suite === 'mt-bench') {
    if (!flags.data) {
      throw new JoulebenchError('E_USAGE', "--suite mt-bench needs --data question.jsonl (FastChat's form; none ship with joulebench: joulebench fetch mt-bench)");
    }
    const mt = loadMtBench(flags.data, flags.references !== undefined ? { references: flags.references } : {});
    return { ...mt, version: relabel(mt.version) };
  }
  if (flags.suite !== 'mmlu') {
    if (flags.data) throw new JoulebenchError('E_USAGE', '--data applies to --suite mmlu and --suite mt-bench');
    if (p?.suite_version !== undefined) throw new JoulebenchError('E_CONFIG', `${cfg?.path}: params.suite_version applies to --suite mmlu only`);
    if (stream && !isBundledSuite(flags.suite) && isJsonlSuitePath(flags.suite)) {
      return streamJsonlSuite(flags.suite, { selection: stream.selection, relabel });
    }
    const suite = loadSuite(flags.suite);
    return { ...suite, version: relabel(suite.version) };
  }
  const data = flags.data ?? p?.data ?? MMLU_SAMPLE;
  const mmluOpts = {
    ...(data === MMLU_SAMPLE ? { version: MMLU_SAMPLE_VERSION } : {}),
    ...(cfg ? { config_path: cfg.path } : {}),
    ...(p?.subjects ? { subjects: p.subjects } : {}),
    ...(p?.limit !== undefined ? { limit: p.limit } : {}),
    ...(p?.retry ? { retry_max_attempts: p.retry.max_attempts } : {}),
    ...(p?.suite_version !== undefined ? { version: p.suite_version } : {}),
  };
  // Streamed like a JSONL suite file: checked and digested first, read again per pass (suites/mmlu.ts).
  return stream ? streamMmlu(data, { ...mmluOpts, selection: stream.selection }) : loadMmlu(data, mmluOpts);
}
