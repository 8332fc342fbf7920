import { digestOf } from '../core/canonical.js';
import type { Suite } from '../core/types.js';
import { promptOf } from './prompt.js';

/**
 * The suite digest: sha256 of a canonical description of exactly which cases were selected and how
 * they are asked (prompt as sent, expected, choices, weight) and how they are scored. Two runs are
 * comparable only when their digests match. A suite that defines its own digest (MMLU) keeps it.
 */
export function suiteDigest(suite: Suite): string {
  if (suite.digest !== undefined) return suite.digest;
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
