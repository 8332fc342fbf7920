import { digestOf } from '../core/canonical.js';
import type { Suite } from '../core/types.js';
import { promptOf } from './prompt.js';

/**
 * The suite digest: sha256 of a canonical description of exactly which cases were selected and how
 * they are asked (prompt as sent, expected, choices, weight) and how they are scored. Two runs are
 * comparable only when their digests match.
 */
export function suiteDigest(suite: Suite): string {
  return digestOf({
    name: suite.name,
    version: suite.version,
    scorer: suite.scorer,
    cases: suite.cases.map((c) => ({
      id: c.id,
      dataset: c.dataset,
      prompt: promptOf(c),
      expected: c.expected,
      choices: c.choices,
      weight: c.weight,
    })),
  });
}
