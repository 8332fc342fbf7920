import type { z } from 'zod';
import { JoulebenchError } from '../core/errors.js';
import type { Target } from '../core/types.js';
import { quote } from '../core/one-line.js';

/** A target's kind plus kind-specific settings; factories validate their own and throw `E_CONFIG` naming the key. */
export interface TargetSpec {
  kind: string;
  /** For a cascade: the target its neural stage delegates to. */
  neural?: TargetSpec;
  [key: string]: unknown;
}

/** A zod message that names the value it refused: `must be WHAT, got VALUE`. */
export function got(what: string): { error: (issue: { input: unknown }) => string } {
  return { error: (issue) => `must be ${what}, got ${JSON.stringify(issue.input)}` };
}

/** A kind's own keys of a spec checked by `schema`: the first problem is E_CONFIG `target.KEY: message`. */
export function parseSpec<S extends z.ZodType>(schema: S, spec: TargetSpec): z.infer<S> {
  const r = schema.safeParse(spec);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new JoulebenchError('E_CONFIG', `target.${issue.path.join('.')}: ${issue.message}`);
}

export interface TargetFactory {
  /** One line for `--help`. */
  summary: string;
  /** Heavy code is imported here, so a user who never asks for this kind never loads it. */
  create(spec: TargetSpec): Promise<Target>;
}

/** Every target kind, in one explicit table. */
export const TARGETS: Record<string, TargetFactory> = {
  cascade: {
    summary: 'the reference cache → KV → graph → neural cascade (neural: echo, or any target)',
    async create(spec) {
      const { createReferenceCascade } = await import('./cascade/reference.js');
      const neural = spec.neural ? await createTarget(spec.neural) : undefined;
      const cap = spec.cache_capacity;
      if (cap !== undefined && (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 1)) {
        throw new JoulebenchError('E_CONFIG', 'target.cache_capacity must be an integer >= 1');
      }
      return createReferenceCascade({ ...(neural ? { neural } : {}), ...(typeof cap === 'number' ? { cache: { capacity: cap } } : {}) });
    },
  },
  echo: {
    summary: 'the echo backend alone (answers with the prompt; 50 J modelled per inference)',
    async create(spec) {
      const { createEchoTarget } = await import('./cascade/echo.js');
      const energy = spec.energy_j;
      if (energy !== undefined && (typeof energy !== 'number' || !(energy >= 0))) {
        throw new JoulebenchError('E_CONFIG', 'target.energy_j must be a number >= 0');
      }
      return createEchoTarget(typeof energy === 'number' ? { energy_j: energy } : {});
    },
  },
  openai: {
    summary: 'any OpenAI-compatible /chat/completions endpoint (vLLM, llama.cpp, Ollama /v1, gateways)',
    create: async (spec) => (await import('./openai/spec.js')).createOpenAITargetFromSpec(spec),
  },
  replay: {
    summary: 'recorded answers (a results JSONL or a fixture of {id, answer}), re-scored offline',
    async create(spec) {
      const { createReplayTarget } = await import('./replay.js');
      if (typeof spec.answers !== 'string' || spec.answers === '') {
        throw new JoulebenchError('E_CONFIG', 'target.answers is required for a replay target (a results JSONL or a fixture of {id, answer}; CLI: --answers FILE)');
      }
      return createReplayTarget(spec.answers);
    },
  },
  mock: {
    summary: 'offline mock (config mode: mock): answers each case with a letter A–D from the SHA-256 of its id',
    create: async () => (await import('./replay.js')).createMockTarget(),
  },
  ollama: {
    summary: "a model served by Ollama's native API (--model, --base-url; default http://127.0.0.1:11434)",
    async create(spec) {
      const { createOllamaTarget, ollamaOptionsFromSpec } = await import('./ollama/target.js');
      return createOllamaTarget(ollamaOptionsFromSpec(spec));
    },
  },
  llamacpp: {
    summary: 'a GGUF model run in this process by llama.cpp (node-llama-cpp, optional dependency; --model-path)',
    async create(spec) {
      const { createLlamaCppTarget, llamaCppOptionsFromSpec } = await import('./llamacpp/target.js');
      return createLlamaCppTarget(llamaCppOptionsFromSpec(spec));
    },
  },
};

function factoryOf(kind: string): TargetFactory {
  if (Object.hasOwn(TARGETS, kind)) return TARGETS[kind]!;
  throw new JoulebenchError('E_CONFIG', `target.kind: unknown target ${quote(kind)} (known: ${Object.keys(TARGETS).join(', ')})`);
}

export async function createTarget(spec: TargetSpec): Promise<Target> {
  return factoryOf(spec.kind).create(spec);
}

/** Checks a spec as {@link createTarget} would; a llamacpp model need only be a regular file (loading it costs a run). */
export async function checkTarget(spec: TargetSpec): Promise<void> {
  factoryOf(spec.kind);
  if (spec.kind === 'llamacpp') {
    const { llamaCppOptionsFromSpec } = await import('./llamacpp/target.js');
    const { model_path } = llamaCppOptionsFromSpec(spec);
    const { statSync } = await import('node:fs');
    let file = false;
    try {
      file = statSync(model_path).isFile();
    } catch {
      // unreadable: refused below
    }
    if (!file) throw new JoulebenchError('E_CONFIG', `target.model_path: ${quote(model_path)} is not a readable GGUF file`);
    return;
  }
  let own = spec;
  if (spec.kind === 'cascade' && spec.neural) {
    await checkTarget(spec.neural);
    // The cascade with its default neural stage: the settings of its own are checked the same way.
    const { neural: _n, ...rest } = spec;
    own = rest;
  }
  const t = await createTarget(own);
  await t.close?.();
}
