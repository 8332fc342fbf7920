import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import { constantWriter, jsonStringBound, writeAscii, writeJsonNumber, writeJsonString, writeNull, writeText } from '../core/json-bytes.js';
import type { Case, Suite } from '../core/types.js';
import { promptOf } from './prompt.js';

/** How one case is asked and scored: the part of it the digest covers. */
export function caseDescriptor(c: Case): Record<string, unknown> {
  return {
    id: c.id,
    dataset: c.dataset,
    prompt: promptOf(c),
    expected: c.expected,
    choices: c.choices,
    weight: c.weight,
    reference: c.reference,
    scorer: c.scorer,
  };
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
  private readonly hash = createHash('sha256');
  // Each case's canonical JSON is encoded straight into a reusable buffer, hashed a buffer at a time:
  // making a string per case cost more than the hashing (≈ 0.4 µs a case, `npm run bench`).
  private buf = Buffer.allocUnsafe(1 << 16);
  private used = writeAscii(this.buf, 0, '{"cases":[');
  count = 0;

  add(c: Case): void {
    const prompt = promptOf(c);
    const choices = c.choices === undefined ? undefined : JSON.stringify(c.choices);
    const reference = c.reference === undefined ? undefined : JSON.stringify(c.reference);
    // Keys, punctuation, the comma before the case and the weight's digits fit in 128 bytes; each
    // string is bounded with its quotes, and `choices` is JSON already (3 bytes a unit at most).
    const bound =
      128 +
      jsonStringBound(c.id.length) +
      jsonStringBound(c.dataset.length) +
      jsonStringBound(prompt.length) +
      jsonStringBound(c.expected?.length ?? 2) +
      3 * (choices?.length ?? 0) +
      3 * (reference?.length ?? 0) +
      jsonStringBound(c.scorer?.length ?? 0);
    let used = this.used;
    let buf = this.buf;
    if (used + bound > buf.length) {
      this.hash.update(buf.subarray(0, used));
      used = 0;
      if (bound > buf.length) buf = this.buf = Buffer.allocUnsafe(bound);
    }
    if (this.count > 0) buf[used++] = 0x2c; // ,
    used = writeCanonicalCase(buf, used, c, prompt, choices, reference);
    // A typed array drops writes past its end without a word: a wrong bound must not become a wrong digest.
    if (used > buf.length) throw new Error(`suiteDigest: case ${this.count} overran its ${bound}-byte bound`);
    this.used = used;
    this.count++;
  }

  /** The digest of the cases added so far under this name, scorer and version. */
  digest(suite: Pick<Suite, 'name' | 'scorer' | 'version'>): string {
    const hash = this.hash.copy();
    hash.update(this.buf.subarray(0, this.used));
    hash.update('],' + canonicalJson({ name: suite.name, scorer: suite.scorer, version: suite.version }).slice(1));
    return 'sha256:' + hash.digest('hex');
  }
}

const K_CHOICES = constantWriter('{"choices":');
const K_DATASET = constantWriter('"dataset":');
const K_DATASET_FIRST = constantWriter('{"dataset":');
const K_EXPECTED = constantWriter(',"expected":');
const K_ID = constantWriter(',"id":');
const K_PROMPT = constantWriter(',"prompt":');
const K_REFERENCE = constantWriter(',"reference":');
const K_SCORER = constantWriter(',"scorer":');
const K_WEIGHT = constantWriter(',"weight":');

/** canonicalJson(caseDescriptor(c)) written directly: keys already in sorted order. */
function writeCanonicalCase(buf: Buffer, o: number, c: Case, prompt: string, choices: string | undefined, reference: string | undefined): number {
  if (choices === undefined) o = K_DATASET_FIRST(buf, o);
  else o = K_DATASET(buf, writeText(buf, K_CHOICES(buf, o), choices + ','));
  o = K_EXPECTED(buf, writeJsonString(buf, o, c.dataset));
  o = c.expected === null ? writeNull(buf, o) : writeJsonString(buf, o, c.expected);
  o = K_PROMPT(buf, writeJsonString(buf, K_ID(buf, o), c.id));
  o = writeJsonString(buf, o, prompt);
  // Optional keys, present only on cases that have them (so older suites keep their digests).
  if (reference !== undefined) o = writeText(buf, K_REFERENCE(buf, o), reference);
  if (c.scorer !== undefined) o = writeJsonString(buf, K_SCORER(buf, o), c.scorer);
  o = K_WEIGHT(buf, o);
  o = writeJsonNumber(buf, o, c.weight);
  buf[o] = 0x7d; // }
  return o + 1;
}
