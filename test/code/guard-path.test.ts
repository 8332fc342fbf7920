import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { guardPath } from '../../src/code/oracle.js';

test('the grading guard is reachable by an unprivileged solver user wherever the package lies (a clone under /root or a 0700 folder)', () => {
  const p = guardPath();
  assert.ok((statSync(p).mode & 0o004) !== 0, 'the guard is readable by others');
  // Every folder above it can be traversed by others: the tests run as uid 65534 when joulebench is root.
  for (let d = dirname(p); d !== dirname(d); d = dirname(d)) assert.ok((statSync(d).mode & 0o001) !== 0, `${d} is not traversable by others`);
  assert.match(readFileSync(p, 'utf8'), /node:assert/);
  assert.equal(guardPath(), p, 'staged once per process');
});
