import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-nocodegen-'));

/** The results file's lines with the measured wall latency taken out (it differs run to run). */
function linesWithoutLatency(path: string): string[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.replace(/"latency_ms":[^,]+,/, '').replace(/,"scored_wall_ms":[^,}]+/, ''));
}

describe('joulebench run where code generation from strings is off', () => {
  it('writes the same results file and suite digest without its generated encoders', async () => {
    const off = { NODE_OPTIONS: '--disallow-code-generation-from-strings' };
    const a = await cli(['run', '--suite', 'all', '--out', join(dir, 'off.json'), '--results', join(dir, 'off.jsonl')], { env: off });
    assert.equal(a.code, 0, a.stderr);
    const b = await cli(['run', '--suite', 'all', '--out', join(dir, 'on.json'), '--results', join(dir, 'on.jsonl')]);
    assert.equal(b.code, 0, b.stderr);
    const offLines = linesWithoutLatency(join(dir, 'off.jsonl'));
    assert.equal(offLines.length, 103, 'header, 100 cases (warmup and scored), run_measures, end');
    assert.deepEqual(offLines, linesWithoutLatency(join(dir, 'on.jsonl')));
    for (const line of offLines) JSON.parse(line);
    const digest = (f: string) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { suite: { digest: string } }).suite.digest;
    assert.match(digest('off.json'), /^sha256:[0-9a-f]{64}$/);
    assert.equal(digest('off.json'), digest('on.json'));
  });
});
