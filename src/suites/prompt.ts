import type { Case } from '../core/types.js';

/** The line that joins turns of a multi-turn case (EOC v0 §3, MT-Bench's turn-2 convention). */
export const FOLLOW_UP = 'Follow-up:';

/** The prompt as sent: `prompt`, or the turns joined so each later turn starts a `Follow-up:` line. */
export function promptOf(c: Pick<Case, 'prompt' | 'turns'>): string {
  if (c.turns && c.turns.length > 0) return c.turns.join(`\n${FOLLOW_UP} `);
  return c.prompt ?? '';
}
