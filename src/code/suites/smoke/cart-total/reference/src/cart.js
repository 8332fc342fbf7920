import { toCents } from './money.js';

/** The total of a cart of { price (dollars), qty } items, in cents. */
export function cartTotalCents(items) {
  return items.reduce((sum, item) => sum + toCents(item.price) * item.qty, 0);
}
