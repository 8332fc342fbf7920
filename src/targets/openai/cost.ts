import type { z } from 'zod';
import type { tokenPricesSchema } from '../../config/schema.js';
import type { Usage } from '../../core/types.js';

/** Token prices, USD per million tokens (`prices:`); a cached or reasoning price absent: its whole's price. */
export type Prices = z.infer<typeof tokenPricesSchema>;

/**
 * Cost of one call, USD, as providers bill it: cached prompt tokens at the cached price, reasoning tokens
 * at the reasoning price, the rest at the input and output prices. `null` (never 0) when a price or a
 * token count is missing; a part count the server did not report is billed at its whole's price.
 */
export function costOf(usage: Usage | undefined, prices: Prices | undefined): number | null {
  if (!prices || !usage || usage.prompt_tokens === null || usage.completion_tokens === null) return null;
  const cached = usage.cached_prompt_tokens ?? 0;
  const reasoning = usage.reasoning_tokens ?? 0;
  const input = (usage.prompt_tokens - cached) * prices.input_usd_per_mtok + cached * (prices.cached_input_usd_per_mtok ?? prices.input_usd_per_mtok);
  const output = (usage.completion_tokens - reasoning) * prices.output_usd_per_mtok + reasoning * (prices.reasoning_usd_per_mtok ?? prices.output_usd_per_mtok);
  return (input + output) / 1e6;
}
