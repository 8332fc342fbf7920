import { statSync } from 'node:fs';
import { join } from 'node:path';
import { joulebenchHome } from '../../home.js';

/** The default neural stage's model, `$JOULEBENCH_HOME/models/default.gguf` (where `joulebench fetch model` writes). */
export function defaultModelPath(env: NodeJS.ProcessEnv): string {
  return join(joulebenchHome(env), 'models', 'default.gguf');
}

/** The default model's path when it is a regular file, else `null` (the echo backend is used). */
export function findDefaultModel(env: NodeJS.ProcessEnv): string | null {
  const p = defaultModelPath(env);
  try {
    return statSync(p, { throwIfNoEntry: false })?.isFile() ? p : null;
  } catch {
    return null;
  }
}

/** The table's first line for a cascade run: which neural stage answered (`target` is the cascade's `describe()`). */
export function neuralStageLine(target: Record<string, unknown>, env: NodeJS.ProcessEnv): string | null {
  if (target.kind !== 'cascade') return null;
  const stages = Array.isArray(target.stages) ? (target.stages as Record<string, unknown>[]) : [];
  const backend = (stages.find((s) => s.stage === 'neural')?.backend ?? {}) as Record<string, unknown>;
  if (backend.kind === 'llamacpp') return `neural stage: llamacpp, ${String(backend.model_path)}`;
  if (backend.kind === 'echo') return `neural stage: echo (no model: ${defaultModelPath(env)} is absent; joulebench fetch model puts one there)`;
  return `neural stage: ${String(backend.kind ?? 'unknown')}`;
}
