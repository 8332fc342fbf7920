import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
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

test('the staged guard and seccomp filter leave nothing in the temp folder once the process exits', (t) => {
  const code = [
    "import { guardPath } from './src/code/oracle.ts';",
    "import { seccompFile } from './src/code/seccomp.ts';",
    'console.log(JSON.stringify([guardPath(), seccompFile()]));',
  ].join('\n');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
  const staged = (JSON.parse(out) as (string | null)[]).filter((p): p is string => p !== null);
  if (staged.length < 2) t.diagnostic('no seccomp program for this architecture');
  for (const p of staged) assert.equal(existsSync(dirname(p)), false, `${dirname(p)} left behind`);
});
