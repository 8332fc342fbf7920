import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import type { Case, Suite } from '../core/types.js';
import { promptOf } from './prompt.js';

/**
 * How one case is asked and scored: the part of it the digest covers. Its keys are in sorted order, so
 * JSON.stringify of it is its canonical JSON (every value is a string, a number, null or a string list).
 */
export function caseDescriptor(c: Case): Record<string, unknown> {
  const { choices, dataset, expected, id, reference, scorer, weight } = c;
  return { choices, dataset, expected, id, prompt: promptOf(c), reference, scorer, weight };
}

/**
 * The suite digest: `sha256:` + hex sha256 of the canonical JSON of `{cases: [caseDescriptor…], name,
 * scorer, version}`; runs are comparable only when they match. A suite's own digest (MMLU's) is kept.
 */
export function suiteDigest(suite: Suite): string {
  if (suite.digest !== undefined) return suite.digest;
  const d = new SuiteDigester();
  const cases = suite.cases;
  for (let i = 0; i < cases.length; i++) d.add(cases[i]!);
  return d.digest(suite);
}

/** {@link suiteDigest} built case by case (a streamed suite); `digest()` may be called more than once. */
export class SuiteDigester {
  private readonly hash = createHash('sha256').update('{"cases":[');
  count = 0;

  add(c: Case): void {
    this.hash.update((this.count++ > 0 ? ',' : '') + JSON.stringify(caseDescriptor(c)));
  }

  /** The digest of the cases added so far under this name, scorer and version. */
  digest(suite: Pick<Suite, 'name' | 'scorer' | 'version'>): string {
    const hash = this.hash.copy();
    hash.update('],' + canonicalJson({ name: suite.name, scorer: suite.scorer, version: suite.version }).slice(1));
    return 'sha256:' + hash.digest('hex');
  }
}
