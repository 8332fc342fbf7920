/**
 * Parameter counts (billions) of well-known open-weight models, from their model cards on Hugging
 * Face. Mixture-of-experts models list total and active parameters. A name not here has no modelled
 * energy (`n/a`) unless the config gives `target.energy_model.active_params_b`.
 */
interface ModelParams {
  /** The canonical name. */
  name: string;
  total_b: number;
  active_b: number;
  /** Other spellings of the same model (lowercase; matched after {@link normalizeModelName}). */
  aliases: readonly string[];
}

export const MODEL_PARAMS: readonly ModelParams[] = [
  { name: 'llama-3.1-8b', total_b: 8.03, active_b: 8.03, aliases: ['meta-llama-3.1-8b', 'llama3.1-8b', 'llama3.1'] },
  { name: 'llama-3.1-70b', total_b: 70.6, active_b: 70.6, aliases: ['meta-llama-3.1-70b', 'llama3.1-70b'] },
  { name: 'llama-3.1-405b', total_b: 405.9, active_b: 405.9, aliases: ['meta-llama-3.1-405b', 'llama3.1-405b'] },
  { name: 'llama-3.3-70b', total_b: 70.6, active_b: 70.6, aliases: ['llama3.3-70b', 'llama3.3'] },
  { name: 'llama-3.2-1b', total_b: 1.24, active_b: 1.24, aliases: ['llama3.2-1b'] },
  { name: 'llama-3.2-3b', total_b: 3.21, active_b: 3.21, aliases: ['llama3.2-3b', 'llama3.2'] },
  { name: 'mistral-7b', total_b: 7.25, active_b: 7.25, aliases: ['mistral'] },
  { name: 'mixtral-8x7b', total_b: 46.7, active_b: 12.9, aliases: ['mixtral'] },
  { name: 'mixtral-8x22b', total_b: 140.6, active_b: 39.1, aliases: [] },
  { name: 'qwen2.5-7b', total_b: 7.62, active_b: 7.62, aliases: ['qwen2.5'] },
  { name: 'qwen2.5-72b', total_b: 72.7, active_b: 72.7, aliases: [] },
  { name: 'gemma-2-9b', total_b: 9.24, active_b: 9.24, aliases: ['gemma2-9b', 'gemma2'] },
  { name: 'gemma-2-27b', total_b: 27.2, active_b: 27.2, aliases: ['gemma2-27b'] },
  { name: 'phi-3-mini', total_b: 3.82, active_b: 3.82, aliases: ['phi-3-mini-4k', 'phi-3-mini-128k', 'phi3'] },
  // Not `deepseek-r1` alone: Ollama uses that name for small distilled models.
  { name: 'deepseek-v3', total_b: 671, active_b: 37, aliases: ['deepseek-v3-0324', 'deepseek-r1-0528'] },
  { name: 'gpt-oss-20b', total_b: 21, active_b: 3.6, aliases: [] },
  { name: 'gpt-oss-120b', total_b: 117, active_b: 5.1, aliases: [] },
];

/**
 * A model id reduced to the table's form (`meta-llama/Llama-3.1-8B-Instruct` → `llama-3.1-8b`); other tags
 * are kept, so a name the table does not list exactly stays unknown rather than guessed.
 */
export function normalizeModelName(model: string): string {
  let n = model.trim().toLowerCase();
  n = n.slice(n.lastIndexOf('/') + 1).replace(/:/g, '-');
  n = n.replace(/-latest$/, '').replace(/-v\d+\.\d+$/, '').replace(/-(instruct|it|chat)$/, '');
  if (n.startsWith('meta-llama-')) n = n.slice('meta-'.length);
  return n;
}

/** The table's entry for a model id, or null when it is not listed. */
export function lookupModelParams(model: string): ModelParams | null {
  const n = normalizeModelName(model);
  return MODEL_PARAMS.find((m) => m.name === n || m.aliases.includes(n)) ?? null;
}
