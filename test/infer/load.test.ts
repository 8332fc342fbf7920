import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readInferFile } from '../../src/infer/load.js';

describe('readInferFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-load-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('names the file and the key when it is not an infer run file', () => {
    const p = join(dir, 'report.json');
    writeFileSync(p, '{"case_count": 1}');
    assert.throws(() => readInferFile(p), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'E_REPORT');
      assert.match(e.message, /report\.json: not a joulebench infer run file \(format: /);
      return true;
    });
  });
  it('says when the file is missing or not JSON', () => {
    assert.throws(() => readInferFile(join(dir, 'nope.json')), /nope\.json: no such file/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{');
    assert.throws(() => readInferFile(bad), /bad\.json: not an infer run file/);
  });
});
