import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DIFF_KEEP_BYTES, keepDiff, type Datapoint } from '../../src/code/oracle.js';

test("a datapoint keeps the solver's diff, clipped at whole lines; no git is a noted null, never a verdict", () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-keep-diff-'));
  try {
    const before = join(dir, 'before');
    const after = join(dir, 'after');
    mkdirSync(before);
    mkdirSync(after);
    writeFileSync(join(before, 'a.txt'), 'old\n');
    // 3,000 changed lines of 40 bytes: a diff well over the kept size.
    writeFileSync(join(after, 'a.txt'), Array.from({ length: 3000 }, (_, i) => `line ${String(i).padStart(33, '0')}\n`).join(''));
    const dp: Pick<Datapoint, 'diff' | 'diff_bytes' | 'diff_error'> = {};
    keepDiff(dp, before, after);
    assert.ok(dp.diff_bytes! > DIFF_KEEP_BYTES, `whole size ${dp.diff_bytes}`);
    const kept = Buffer.byteLength(dp.diff!);
    assert.ok(kept <= DIFF_KEEP_BYTES && kept > DIFF_KEEP_BYTES - 100, `kept ${kept}`);
    assert.ok(dp.diff!.startsWith('diff --git a/a.txt b/a.txt') && dp.diff!.endsWith('\n'));
    const none: typeof dp = {};
    const path = process.env.PATH;
    process.env.PATH = join(dir, 'no-git-here');
    try {
      keepDiff(none, before, after);
    } finally {
      process.env.PATH = path;
    }
    assert.equal(none.diff, null);
    assert.match(none.diff_error!, /^the diff could not be made: /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
