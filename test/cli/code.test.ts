import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CodeResults } from '../../src/code/results.js';
import { tempDir, writeShellTask, CHECK } from '../code/helpers.js';
import { writePowercapTree } from '../meters/powercap-tree.js';
import { BIN, cli as run } from '../helpers/cli.js';

const tmp = tempDir('jb-code-cli-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const suite = join(tmp, 'suite');
writeShellTask(suite, { name: 'a' });
writeShellTask(suite, { name: 'b' });

const cli = (args: string[], env: Record<string, string> = {}) => run(['code', ...args], { env });

const leaky = 'leaky=cmd:echo "S=${SECRET_TOKEN:-unset}"';

describe('joulebench code (built CLI)', async () => {
  test('runs a suite with rollouts, writes results, prints the frontier table; secrets are not passed', async () => {
    const out = join(tmp, 'r.json');
    const r = await cli(['--suite', suite, '--solvers', `reference,noop,${leaky}`, '--rollouts', '2', '--sandbox', 'none', '--out', out], { SECRET_TOKEN: 's3cret' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /joulebench code · suite suite \(2 tasks/);
    assert.match(r.stdout, /rollouts 2 \(best-of-2\) · sandbox none · meter none/);
    // Issue 11: meter none says joules are null, never "using the estimate".
    assert.doesNotMatch(r.stdout + r.stderr + readFileSync(out, 'utf8'), /using the estimate/);
    assert.match(r.stdout, /reference\s+2\/2\s+100\.0 %\s+n\/a\s+n\/a/);
    assert.match(r.stdout, /noop\s+0\/2\s+0\.0 %/);
    assert.match(r.stderr, /\[12\/12\] b · leaky #1: not resolved/);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    assert.equal(res.format, 'joulebench-code-results/1');
    assert.equal(res.datapoints.length, 12);
    assert.deepEqual(res.config.scrubbed_env, ['SECRET_TOKEN']);
    const tail = res.datapoints.find((d) => d.solver === 'leaky')?.solver_run?.output_tail ?? '';
    assert.match(tail, /S=unset/);
    assert.doesNotMatch(readFileSync(out, 'utf8'), /s3cret/);
    assert.equal(res.solvers.find((s) => s.solver === 'reference')?.pareto_usd, true);
    assert.equal(res.solvers.find((s) => s.solver === 'leaky')?.usd_per_resolved, null);
    assert.ok(typeof res.receipt?.started_utc === 'string');

    const rep = await cli(['--report', out]);
    assert.equal(rep.code, 0, rep.stderr);
    const refLine = rep.stdout.split('\n').find((l) => /^\s+reference\s/.test(l)) ?? '';
    assert.match(refLine, /\$$/, 'reference is on the $ frontier');
    assert.match(rep.stdout, /frontier: E = Pareto-optimal on \(resolution ↑, J\/resolved ↓\)/);

    // The same run was streamed datapoint by datapoint; its report is the same, even cut short mid-line.
    const stream = join(tmp, 'r.datapoints.jsonl');
    const lines = readFileSync(stream, 'utf8').trim().split('\n');
    assert.equal(lines.length, 13);
    assert.match(lines[0]!, /"record":"header","format":"joulebench-code-datapoints\/1"/);
    appendFileSync(stream, '{"record":"datapoint","task":"a","sol');
    const fromStream = await cli(['--report', stream]);
    assert.equal(fromStream.code, 0, fromStream.stderr);
    assert.equal(fromStream.stdout, rep.stdout);
  });

  test('--pass-env passes a named secret', async () => {
    const out = join(tmp, 'pass.json');
    const r = await cli(['--suite', suite, '--tasks', 'a', '--solvers', leaky, '--sandbox', 'none', '--pass-env', 'SECRET_TOKEN', '-q', '--out', out], { SECRET_TOKEN: 's3cret' });
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    assert.match(res.datapoints[0]?.solver_run?.output_tail ?? '', /S=s3cret/);
  });

  test('the bundled smoke suite is found from dist/ and a task resolves under the default sandbox', async () => {
    const out = join(tmp, 'smoke.json');
    const r = await cli(['--tasks', 'off-by-one', '--solvers', 'reference', '-q', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    assert.equal(res.suite.name, 'smoke');
    assert.equal(res.datapoints[0]?.resolved, true);
    assert.ok(['bwrap', 'none'].includes(String(res.config.sandbox.kind)));
  });

  test('bad input exits 2 with one line naming the file and key', async () => {
    const bad = join(tmp, 'bad');
    writeShellTask(bad, { name: 'x', toml: 'name = "x"\nprompt = "p"\ntest_cmd = "true"\ntest_files = ["test/check.sh"]\ntimeout = 3' });
    // (Unknown solvers and --meter model are usage errors too; their messages are tested in the library tests.)
    writeFileSync(join(tmp, 'junk.json'), '{"format":"other"}');
    const [r, rep] = await Promise.all([cli(['--suite', bad, '--solvers', 'noop']), cli(['--report', join(tmp, 'junk.json')])]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^joulebench: .*bad\/x\/task\.toml: timeout: unknown key/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.equal(rep.code, 2);
    assert.match(rep.stderr, /junk\.json: format:/);
  });

  test('every datapoint invalid exits 1 after writing the results', async () => {
    const passing = join(tmp, 'passing');
    writeShellTask(passing, { name: 'p', before: { 'src/value.txt': 'fixed\n', 'test/check.sh': CHECK } });
    const out = join(tmp, 'invalid.json');
    const r = await cli(['--suite', passing, '--solvers', 'noop', '--sandbox', 'none', '-q', '--out', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /every datapoint is invalid/);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    assert.equal(res.solvers[0]?.invalid_count, 1);
  });

  test('Ctrl-C ends the running solver tree and removes the workdirs', async () => {
    const tmpBase = join(tmp, 'tmpbase');
    mkdirSync(tmpBase);
    const pidFile = join(tmp, 'sleeper.pid');
    const stream = join(tmp, 'interrupted.jsonl');
    const child = spawn(process.execPath, [BIN, 'code', '--suite', suite, '--tasks', 'a', '--solvers', `cmd:sleep 30 & echo $! > ${pidFile}; wait`, '--sandbox', 'none', '-q', '--datapoints', stream], {
      env: { ...process.env, NO_COLOR: '1', TMPDIR: tmpBase },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(existsSync(pidFile), 'the solver started');
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /SIGINT: killed 1 running solver\/test process group\(s\), removed 1 workdir\(s\)/);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    let gone = false;
    for (let i = 0; i < 20 && !gone; i++) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        gone = stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
      } catch {
        gone = true;
      }
      if (!gone) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(gone, `sleep ${pid} still running`);
    assert.deepEqual(readdirSync(tmpBase), []);
    assert.match(readFileSync(stream, 'utf8'), /^\{"record":"header"/);
  });

  test('energy end to end: auto reads a RAPL tree that the solver itself advances; noop is below the floor (~)', async () => {
    const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1_000_000 }]);
    try {
      const f = join(tree.root, 'intel-rapl:0', 'energy_uj');
      // 5 J per run, written atomically as the kernel would present it.
      const burn = `burn=cmd:v=$(cat ${f}); echo $((v+5000000)) > ${f}.tmp && mv ${f}.tmp ${f}; echo fixed > src/value.txt`;
      const out = join(tmp, 'energy.json');
      const r = await cli(['--suite', suite, '--solvers', `${burn},noop`, '--sandbox', 'none', '--powercap-root', tree.root, '--idle-ms', '50', '--out', out], {
        CUDA_VISIBLE_DEVICES: '',
      });
      assert.equal(r.code, 0, r.stderr);
      const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
      assert.equal(res.config.meter.source, 'rapl');
      assert.equal(res.config.idle?.status, 'measured');
      const burnDps = res.datapoints.filter((d) => d.solver === 'burn');
      assert.deepEqual(burnDps.map((d) => [d.energy_source, d.joules]), [['rapl', 5], ['rapl', 5]]);
      const burnRow = res.solvers.find((s) => s.solver === 'burn')!;
      assert.equal(burnRow.resolved_count, 2);
      assert.ok(burnRow.joules_per_resolved !== null && Math.abs(burnRow.joules_per_resolved - 5) < 0.5, String(burnRow.joules_per_resolved));
      const noopRow = res.solvers.find((s) => s.solver === 'noop')!;
      // noop takes microseconds, under RAPL's 1 ms floor — unless a loaded machine stalls the window
      // past it; the flag must follow the measured windows either way, and `~` must follow the flag.
      const noopDps = res.datapoints.filter((d) => d.solver === 'noop');
      for (const d of noopDps) assert.equal(d.below_floor, d.window_ms !== null && d.window_ms < 1, `window ${d.window_ms} ms`);
      assert.equal(noopRow.below_floor, noopDps.some((d) => d.below_floor), 'the row flag is any datapoint below the floor');
      if (noopRow.below_floor) assert.match(r.stdout, /^\s+noop\s+0\/2\s+0\.0 %\s+n\/a\s+~/m);
      assert.ok(noopDps.some((d) => d.window_ms !== null && d.window_ms < 50), 'noop windows are short');
      assert.match(r.stdout, /meter auto\(rapl\)/);
    } finally {
      tree.cleanup();
    }
  });

  test('a missing agent is invalid, said once on the terminal, shown as invalid, and exits 2', async () => {
    const out = join(tmp, 'missing.json');
    const r = await cli(['--suite', suite, '--solvers', 'gone=cmd:no-such-agent-xyz {prompt},reference', '--rollouts', '2', '--sandbox', 'none', '-q', '--out', out]);
    assert.equal(r.code, 2, r.stderr);
    const said = r.stderr.split('\n').filter((l) => /gone: solver not available/.test(l));
    assert.equal(said.length, 1, r.stderr);
    assert.match(r.stderr, /gone: not available here, every datapoint invalid/);
    const rep = await cli(['--report', out]);
    assert.match(rep.stdout, /^\s+gone\s+invalid\s+invalid\s/m);
    assert.match(rep.stdout, /^\s+reference\s+2\/2\s+100\.0 %/m);
  });

  test('./agent.sh resolves against the folder joulebench was started from', async () => {
    const userDir = join(tmp, 'user-cwd');
    mkdirSync(userDir, { recursive: true });
    writeFileSync(join(userDir, 'agent.sh'), '#!/bin/sh\necho fixed > src/value.txt\n');
    chmodSync(join(userDir, 'agent.sh'), 0o755);
    const out = join(tmp, 'agent.json');
    const r = await run(['code', '--suite', suite, '--tasks', 'a', '--solvers', 'cmd:./agent.sh {prompt}', '-q', '--out', out], { cwd: userDir });
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    assert.equal(res.datapoints[0]?.resolved, true, JSON.stringify(res.datapoints[0]));
    assert.equal(res.config.solvers[0]?.command_path, join(userDir, 'agent.sh'));
  });

  test('auto without a working bwrap warns on the terminal (one line), even with -q', async () => {
    const bin = join(tmp, 'nobwrap-bin');
    mkdirSync(bin, { recursive: true });
    for (const tool of ['sh', 'grep', 'cat', 'mkdir', 'rm']) {
      const src = ['/bin', '/usr/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
      if (src && !existsSync(join(bin, tool))) symlinkSync(src, join(bin, tool));
    }
    const out = join(tmp, 'nobwrap.json');
    const r = await cli(['--suite', suite, '--tasks', 'a', '--solvers', 'reference', '-q', '--out', out], { PATH: bin });
    assert.equal(r.code, 0, r.stderr);
    const warnings = r.stderr.split('\n').filter((l) => /warning: running solvers WITHOUT a sandbox/.test(l));
    assert.equal(warnings.length, 1, r.stderr);
  });

  test('a bad --test-timeout or --timeout is refused naming the flag given (exit 2)', async () => {
    const flags = ['--test-timeout', '--timeout'];
    const rs = await Promise.all(flags.map((flag) => cli(['--suite', suite, flag, '0'])));
    for (const [i, flag] of flags.entries()) {
      assert.equal(rs[i]!.code, 2, rs[i]!.stderr);
      assert.match(rs[i]!.stderr, new RegExp(`^joulebench: ${flag}: must be a number of seconds > 0, got "0"`, 'm'));
    }
  });
});
