import type { InferRunFile } from './protocol.js';

/** Where an infer run's model ran: Ollama's URL, or the GGUF files run in-process. */
export function inferTargetWhere(t: InferRunFile['target']): string {
  return t.kind === 'ollama' ? t.base_url : `${t.library} ${t.model_paths.join(', ')}`;
}
