import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pythonJsonDumps } from '../../src/core/py-json.js';
import { loadMmlu } from '../../src/suites/mmlu.js';
import { retryDifference } from '../../src/suites/retry-label.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-digest-'));
const q = (over: Record<string, unknown>) => ({ question: 'Which?', choices: ['w', 'x', 'y', 'z'], answer: 1, ...over });
// csbench's fixture form: a JSON array of {id, subject, question, choices[4], answer}; two rows without an id.
const FIXTURE = [
  q({ id: 'astro-001', subject: 'astronomy' }),
  q({ id: 'météo-2', subject: 'astronomy' }),
  q({ subject: 'anatomy' }),
  q({ id: 'astro-😀', subject: 'astronomy' }),
  q({ subject: 'anatomy' }),
];
const data = join(dir, 'mmlu-sample.json');
writeFileSync(data, JSON.stringify(FIXTURE));
const sha = (s: string): string => 'sha256:' + createHash('sha256').update(s, 'utf8').digest('hex');

let server: FakeServer;
before(async () => {
  server = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Answer: B' }));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("MMLU digest parity with the peer (csbench: Python json.dumps, sort_keys, default separators, ensure_ascii)", () => {
  // Each expected string is written by hand as Python prints it; the hex digests were computed by
  // CPython 3 `hashlib.sha256(json.dumps({...}, sort_keys=True).encode())`, independently of this code.
  it('every row, the peer\'s version label', () => {
    const s = loadMmlu(data, { version: 'cais-mmlu/sample-v1' });
    const python = '{"ids": ["astro-001", "m\\u00e9t\\u00e9o-2", "anatomy-0", "astro-\\ud83d\\ude00", "anatomy-1"], "version": "cais-mmlu/sample-v1"}';
    assert.equal(s.digest, sha(python));
    assert.equal(s.digest, 'sha256:51ac4d876a457d670a4b3d4712be70bb56f84c4a771743bee07a4a5af424101a');
  });
  it('subjects filter, then limit, in file order', () => {
    const s = loadMmlu(data, { version: 'cais-mmlu/sample-v1', subjects: ['astronomy'], limit: 2 });
    assert.equal(s.digest, sha('{"ids": ["astro-001", "m\\u00e9t\\u00e9o-2"], "version": "cais-mmlu/sample-v1"}'));
    assert.equal(s.digest, 'sha256:6f3675ad6cb9f38028cebfba188a22ec8b549fc555725bed9a756f80e581aff7');
  });
  it('rows without an id are <subject>-<n>; retry appends /retry-N to the version', () => {
    const s = loadMmlu(data, { version: 'cais-mmlu/sample-v1', subjects: ['anatomy'], retry_max_attempts: 3 });
    assert.deepEqual(s.cases.map((c) => c.id), ['anatomy-0', 'anatomy-1']);
    assert.equal(s.digest, sha('{"ids": ["anatomy-0", "anatomy-1"], "version": "cais-mmlu/sample-v1/retry-3"}'));
    assert.equal(s.digest, 'sha256:fdbe9fd2777f295df067bad4b13447b5c912a6a9e2b1b205668ea8fd4d26b269');
  });
  it('the encoder: Python\'s escapes for quotes, controls, DEL and non-ASCII', () => {
    assert.equal(pythonJsonDumps({ b: ['a"\\\n\t\u0001\u007f/é'], a: 1 }), '{"a": 1, "b": ["a\\"\\\\\\n\\t\\u0001\\u007f/\\u00e9"]}');
  });
  it('params.suite_version in the config sets V end to end', async () => {
    const cfg = join(dir, 'peer.yaml');
    writeFileSync(cfg, `target:\n  kind: openai\n  endpoint: "${server.url}"\n  model: m\nparams:\n  suite_version: cais-mmlu/sample-v1\n  subjects: [astronomy]\n  limit: 2\n`);
    const out = join(dir, 'r.json');
    const r = await cli(['run', '--suite', 'mmlu', '--data', data, '-c', cfg, '-o', out, '--no-history', '-q', '--meter', 'model']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { suite: { version: string; digest: string } };
    assert.equal(report.suite.version, 'cais-mmlu/sample-v1');
    assert.equal(report.suite.digest, 'sha256:6f3675ad6cb9f38028cebfba188a22ec8b549fc555725bed9a756f80e581aff7');
  });
});

describe('retry is visible on every suite', () => {
  it('params.retry relabels router …/retry-N (the digest changes), and compare says "retry policy differs"', async () => {
    const cfg = join(dir, 'retry.yaml');
    writeFileSync(cfg, `target:\n  kind: openai\n  endpoint: "${server.url}"\n  model: m\nparams:\n  retry:\n    max_attempts: 3\n`);
    const plain = join(dir, 'plain.json');
    const retried = join(dir, 'retried.json');
    const a = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '-o', plain, '--no-history', '-q', '--meter', 'model']);
    const b = await cli(['run', '--suite', 'router', '-c', cfg, '-o', retried, '--no-history', '-q', '--meter', 'model']);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const ra = JSON.parse(readFileSync(plain, 'utf8')) as { suite: { version: string; digest: string } };
    const rb = JSON.parse(readFileSync(retried, 'utf8')) as { suite: { version: string; digest: string } };
    assert.equal(rb.suite.version, `${ra.suite.version}/retry-3`);
    assert.notEqual(rb.suite.digest, ra.suite.digest);
    const c = await cli(['compare', plain, retried]);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /retry policy differs \(none vs retry-3\)/);
    assert.doesNotMatch(c.stderr, /different cases/);
  });
  it('retryDifference only when the retry label is the difference', () => {
    assert.equal(retryDifference('1/retry-2', '1/retry-3'), 'retry policy differs (retry-2 vs retry-3)');
    assert.equal(retryDifference('1', '2/retry-3'), null);
    assert.equal(retryDifference('1', '1'), null);
  });
});
