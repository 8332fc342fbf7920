import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import type { Case, Suite } from '../core/types.js';
import { promptOf } from './prompt.js';

/** How one case is asked and scored: the part of it the digest covers. */
export function caseDescriptor(c: Case): Record<string, unknown> {
  return { id: c.id, dataset: c.dataset, prompt: promptOf(c), expected: c.expected, choices: c.choices, weight: c.weight };
}

/**
 * The suite digest: `sha256:` + hex sha256 of the canonical JSON of
 * `{cases: [caseDescriptor…], name, scorer, version}` — exactly which cases were selected and how
 * they are asked (prompt as sent, expected, choices, weight) and scored. Two runs are comparable only
 * when their digests match. Hashed case by case so a 100,000-case suite never becomes one string.
 * A suite that defines its own digest (MMLU: ids + version, seed 003) keeps it.
 */
export function suiteDigest(suite: Suite): string {
  if (suite.digest !== undefined) return suite.digest;
  const hash = createHash('sha256');
  hash.update('{"cases":[');
  suite.cases.forEach((c, i) => hash.update((i === 0 ? '' : ',') + canonicalCase(c)));
  hash.update('],' + canonicalJson({ name: suite.name, scorer: suite.scorer, version: suite.version }).slice(1));
  return 'sha256:' + hash.digest('hex');
}

/** canonicalJson(caseDescriptor(c)) written directly: keys already in sorted order. */
function canonicalCase(c: Case): string {
  return (
    '{' +
    (c.choices === undefined ? '' : `"choices":${JSON.stringify(c.choices)},`) +
    `"dataset":${JSON.stringify(c.dataset)},"expected":${JSON.stringify(c.expected)},"id":${JSON.stringify(c.id)},` +
    `"prompt":${JSON.stringify(promptOf(c))},"weight":${canonicalJson(c.weight)}}`
  );
}
