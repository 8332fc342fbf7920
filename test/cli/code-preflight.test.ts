/**
 * The sandbox preflight as root meets it: bwrap runs solvers and tests as uid 65534, so a script in a
 * 0700 temp folder, a script passed as an argument (`cmd:sh SCRIPT`), or an agent under root's home
 * must either run or make its datapoints invalid with the fix — never a valid 0 %.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CodeResults } from '../../src/code/results.js';
import { bwrapFor } from '../../src/code/sandbox.js';
import { tempDir, writeShellTask } from '../code/helpers.js';
import { cli as run } from '../helpers/cli.js';

const tmp = tempDir('jb-preflight-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const suite = join(tmp, 'suite');
writeShellTask(suite, { name: 'a' });
const dropsUid = bwrapFor().sandbox?.run_as_uid != null;
const skip = dropsUid ? false : 'needs bwrap started as root (it then runs commands as uid 65534)';

/** An agent script that fixes the task, in a folder only root may enter. */
function privateAgent(base: string): string {
  const dir = mkdtempSync(join(base, 'jb-agent-'));
  chmodSync(dir, 0o700);
  const script = join(dir, 'fix.sh');
  writeFileSync(script, '#!/bin/sh\necho fixed > src/value.txt\necho AGENT-RAN\n');
  chmodSync(script, 0o755);
  return script;
}

describe('joulebench code: the sandbox preflight (as root, under bwrap)', { skip }, () => {
  test('a script in a 0700 temp folder runs, as the command and as an argument (cmd:sh SCRIPT)', async () => {
    const script = privateAgent(tmp);
    const out = join(tmp, 'private.json');
    const r = await run(['code', '--suite', suite, '--solvers', `direct=cmd:${script},viash=cmd:sh ${script}`, '--sandbox', 'bwrap', '-q', '--no-history', '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    for (const d of res.datapoints) {
      assert.match(d.solver_run?.output_tail ?? '', /AGENT-RAN/, `${d.solver}: ${JSON.stringify(d.solver_run)}`);
      assert.equal(d.resolved, true, d.solver);
    }
    assert.deepEqual(res.config.preflight, []);
  });

  test('an agent the sandbox user cannot reach: every datapoint invalid with the fix, one line, exit 2', async () => {
    // Outside /tmp (the sandbox's own /tmp cannot lend it), in a folder closed to other users.
    const base = mkdtempSync('/var/tmp/jb-preflight-');
    chmodSync(base, 0o700);
    try {
      const script = privateAgent(base);
      const out = join(tmp, 'closed.json');
      const r = await run(['code', '--suite', suite, '--solvers', `cmd:${script}`, '--sandbox', 'bwrap', '-q', '--no-history', '-o', out]);
      assert.equal(r.code, 2, r.stderr);
      const lines = r.stderr.split('\n').filter((l) => l.includes('preflight: solver'));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, new RegExp(`cannot run as uid 65534 .*${base}.*chmod o\\+x ${base}`));
      const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
      assert.ok(res.datapoints.every((d) => !d.valid && /^preflight: /.test(d.invalid_reason ?? '')), JSON.stringify(res.datapoints));
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  test('a test interpreter the sandbox user cannot run makes the task invalid, not the solver 0 %', async () => {
    const base = mkdtempSync('/var/tmp/jb-interp-');
    chmodSync(base, 0o700);
    try {
      const bin = join(base, 'bin');
      mkdirSync(bin);
      writeFileSync(join(bin, 'node'), '#!/bin/sh\nexec /usr/bin/env node "$@"\n');
      chmodSync(join(bin, 'node'), 0o755);
      const s2 = join(tmp, 'suite-node');
      writeShellTask(s2, { name: 'n', toml: 'name = "n"\nprompt = "p"\ntest_cmd = "node test/check.sh"\ntest_files = ["test/check.sh"]' });
      const r = await run(['code', '--suite', s2, '--solvers', 'reference', '--sandbox', 'bwrap', '-q', '--no-history', '-o', join(tmp, 'interp.json')], { env: { PATH: `${bin}:${process.env.PATH}` } });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /preflight: task n: the test interpreter node .*cannot run as uid 65534/);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

test('a solver that exits 126 or 127 is invalid, never "not resolved"', async () => {
  const out = join(tmp, 'exit.json');
  const r = await run(['code', '--suite', suite, '--solvers', 'nx=cmd:exit 126,nf=cmd:exit 127', '--sandbox', 'none', '-q', '--no-history', '-o', out]);
  const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
  assert.deepEqual(res.datapoints.map((d) => [d.solver, d.valid]), [['nx', false], ['nf', false]], r.stderr);
  assert.match(res.datapoints[0]?.invalid_reason ?? '', /not executable \(exit 126/);
});
