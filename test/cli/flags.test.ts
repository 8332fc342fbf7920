import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { colorFor } from '../../src/cli/color.js';
import { jb, BIN } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');
const help = (cmd: string): string => jb([cmd, '--help'], { home, env: { COLUMNS: '300' } }).stdout;

describe('consistent flags', () => {
  it('every command that meters takes the same meter-reading flags', () => {
    for (const cmd of ['run', 'meter', 'code', 'infer']) {
      const h = help(cmd);
      for (const flag of ['--meter', '--powercap-root', '--rapl-dram', '--active-watts', '--cpu-watts-per-core']) {
        assert.ok(h.includes(flag), `${cmd} lacks ${flag}`);
      }
    }
  });

  it('infer --powercap-root reaches the meter (a folder with no RAPL zone makes --meter rapl refuse, naming it)', () => {
    const empty = mkdtempSync(join(dir, 'powercap-'));
    const r = jb(['infer', '--model', 'm', '--base-url', 'http://127.0.0.1:9', '--meter', 'rapl', '--powercap-root', empty, '--gpu-snapshot-cmd', '', '-q', '--no-history', '-o', join(dir, 'i.json')], { home });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /meter rapl cannot read here/);
    assert.ok(r.stderr.includes(empty), `names the folder it was given: ${r.stderr}`);
  });

  it('--json wherever a table is printed', () => {
    for (const cmd of ['report', 'frontier', 'history', 'meter', 'infer', 'code']) assert.match(help(cmd), /--json/, cmd);
  });

  it('every flag of every command is on docs/commands.md', () => {
    const doc = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');
    const commands = [...jb(['--help'], { home }).stdout.matchAll(/^  ([a-z][a-z-]*)\b/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
    assert.ok(commands.length >= 9, commands.join(' '));
    for (const cmd of commands) {
      for (const m of help(cmd).matchAll(/(?:^|\s)(--[a-z][a-z0-9-]+)/gm)) assert.ok(doc.includes(m[1]!), `docs/commands.md lacks ${cmd} ${m[1]} (run: node scripts/gen-commands-doc.mjs)`);
    }
  });
});

describe('colour follows the stream written to; NO_COLOR and FORCE_COLOR', () => {
  it('colorFor: NO_COLOR wins, FORCE_COLOR forces, else the stream must be a terminal', () => {
    assert.equal(colorFor({ isTTY: true }, {}), true);
    assert.equal(colorFor({ isTTY: false }, {}), false);
    assert.equal(colorFor({ isTTY: true }, { NO_COLOR: '1' }), false);
    assert.equal(colorFor({ isTTY: true }, { NO_COLOR: '' }), true, 'an empty NO_COLOR is unset (no-color.org)');
    assert.equal(colorFor({ isTTY: false }, { FORCE_COLOR: '1' }), true);
    assert.equal(colorFor({ isTTY: true }, { FORCE_COLOR: '0' }), false);
    assert.equal(colorFor({ isTTY: true }, { NO_COLOR: '1', FORCE_COLOR: '1' }), false);
    assert.equal(colorFor({ isTTY: true }, { TERM: 'dumb' }), false);
  });

  const runTable = (env: Record<string, string | undefined>) => {
    const e: NodeJS.ProcessEnv = { ...process.env, JOULEBENCH_HOME: home, ...env };
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete e[k];
    return spawnSync(process.execPath, [BIN, 'run', '-s', 'router', '--no-history', '-o', join(dir, 'c.json')], { encoding: 'utf8', env: e, cwd: dir });
  };

  it('the CLI: piped streams get no colour; FORCE_COLOR colours the table; NO_COLOR beats it', () => {
    const plain = runTable({ NO_COLOR: undefined, FORCE_COLOR: undefined });
    assert.equal(plain.status, 0, plain.stderr);
    assert.doesNotMatch(plain.stdout + plain.stderr, /\x1b\[/);
    const forced = runTable({ NO_COLOR: undefined, FORCE_COLOR: '1' });
    assert.match(forced.stdout, /\x1b\[/, 'the table (on stdout with -o) is coloured');
    const both = runTable({ NO_COLOR: '1', FORCE_COLOR: '1' });
    assert.doesNotMatch(both.stdout + both.stderr, /\x1b\[/);
  });

  it('a table on a terminal stderr is coloured while stdout is piped (python pty; skipped without python3)', (t) => {
    // stderr on a pseudo-terminal, stdout a pipe: the table goes to stderr (no -o) and must be coloured.
    const py = [
      'import os, pty, subprocess, sys',
      'm, s = pty.openpty()',
      `p = subprocess.Popen([sys.argv[1], sys.argv[2], "run", "-s", "router", "--no-history"], stdout=subprocess.PIPE, stderr=s, env={k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")})`,
      'os.close(s)',
      'out = p.stdout.read()',
      'err = b""',
      'while True:',
      '    try:',
      '        chunk = os.read(m, 65536)',
      '    except OSError:',
      '        break',
      '    if not chunk: break',
      '    err += chunk',
      'p.wait()',
      'sys.stdout.write("STDOUT_ESC=%d STDERR_ESC=%d RC=%d" % (b"\\x1b[" in out, b"\\x1b[" in err, p.returncode))',
    ].join('\n');
    const r = spawnSync('python3', ['-c', py, process.execPath, BIN], { encoding: 'utf8', cwd: dir, env: { ...process.env, JOULEBENCH_HOME: home } });
    if (r.error || r.status !== 0) return t.skip(`python3 with pty not available here: ${r.error?.message ?? r.stderr}`);
    assert.match(r.stdout, /STDOUT_ESC=0 STDERR_ESC=1 RC=0/);
  });
});

describe('the infer table fits the terminal', () => {
  it('folds into one block per arm at the terminal width; --wide keeps the full table; --json gives the file', async () => {
    const { FakeOllama } = await import('../helpers/fake-ollama.js');
    const { cli } = await import('../helpers/cli.js');
    const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 2, prefill_ms_per_token: 0.01, decode_tok_s: () => 30, reply: () => 'ok' });
    const url = await fake.start();
    try {
      const out = join(dir, 'inf.json');
      const r = await cli(['infer', '--model', 'm1', '--base-url', url, '--threads', 'default,2', '--runs', '2', '--warmup', '0', '--cold', '1', '--num-predict', '3', '--gpu-snapshot-cmd', '', '--meter', 'none', '--no-history', '-q', '-o', out], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const wide = await cli(['infer', '--report', out], { cwd: dir, env: { COLUMNS: '80' } });
      assert.equal(wide.code, 0, wide.stderr);
      const tableLines = wide.stdout.split('\n\n')[0]!.split('\n');
      assert.ok(tableLines.every((l) => l.length <= 80), `folded lines fit 80 columns:\n${tableLines.filter((l) => l.length > 80).join('\n')}`);
      assert.match(wide.stdout, /m1@t=2/);
      assert.match(wide.stdout, /\n {4}decode tok\/s +30/);
      const full = await cli(['infer', '--report', out, '--wide'], { cwd: dir, env: { COLUMNS: '80' } });
      assert.ok(full.stdout.split('\n').some((l) => l.length > 150), 'the full table is wide');
      const json = await cli(['infer', '--report', out, '--json'], { cwd: dir });
      assert.equal((JSON.parse(json.stdout) as { format: string }).format, 'joulebench-infer/1');
    } finally {
      await fake.stop();
    }
  });
});
