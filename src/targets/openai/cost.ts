import type { Usage } from '../../core/types.js';

/** Token prices, USD per million tokens. */
export interface Prices {
  input_usd_per_mtok: number;
  output_usd_per_mtok: number;
}

/** Cost of one call, USD; `null` (never 0) when a price or a token count is missing. */
export function costOf(usage: Usage | undefined, prices: Prices | undefined): number | null {
  if (!prices || !usage || usage.prompt_tokens === null || usage.completion_tokens === null) return null;
  return (usage.prompt_tokens * prices.input_usd_per_mtok + usage.completion_tokens * prices.output_usd_per_mtok) / 1e6;
}
