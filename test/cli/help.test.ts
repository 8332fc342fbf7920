import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Help } from 'commander';
import { BIN } from '../helpers/cli.js';
import { buildProgram, COMMANDS } from '../../src/cli/program.js';
import { quickOutput } from '../../src/cli/quick.js';
import { VERSION } from '../../src/version.js';
import type { CliIO } from '../../src/cli/io.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-help-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// A module-loader hook (own thread) that appends every module URL the CLI loads to $JB_LOADED.
writeFileSync(join(dir, 'hooks.mjs'), "import { appendFileSync } from 'node:fs';\nexport async function load(url, ctx, next) { appendFileSync(process.env.JB_LOADED, url + '\\n'); return next(url, ctx); }\n");
writeFileSync(join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");

/** Runs the built CLI with the hook; returns its output and the project modules it loaded. */
function traced(args: string[], name: string): { code: number | null; stdout: string; stderr: string; loaded: string[] } {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', JB_LOADED: log, JOULEBENCH_HOME: dir },
  });
  const loaded = readFileSync(log, 'utf8').split('\n').filter((u) => u.includes('/dist/'));
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, loaded };
}

const commandModules = (loaded: string[]): string[] => loaded.filter((u) => u.includes('/dist/cli/commands/')).map((u) => u.replace(/.*\/commands\//, ''));
const io: CliIO = { out: () => {}, err: () => {} } as unknown as CliIO;

describe('joulebench --help from the static command table', () => {
  it('each table entry has the term and summary of the command it loads', async () => {
    for (const [name, entry] of Object.entries(COMMANDS)) {
      const c = (await entry.load())(io);
      assert.equal(c.name(), name);
      assert.equal(entry.term, new Help().subcommandTerm(c), `COMMANDS.${name}.term`);
      assert.equal(entry.summary, c.description(), `COMMANDS.${name}.summary`);
    }
  });

  it('--help lists every command and loads no command module', () => {
    const r = traced(['--help'], 'help');
    assert.equal(r.code, 0, r.stderr);
    // The hook saw the CLI load (so an empty list below means something).
    assert.ok(r.loaded.some((u) => u.endsWith('/dist/cli/program.js')), r.loaded.join('\n'));
    assert.deepEqual(commandModules(r.loaded), []);
    const listed = [...r.stdout.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]);
    for (const [name, entry] of Object.entries(COMMANDS)) {
      assert.ok(listed.includes(name), `--help lists ${name}`);
      assert.ok(r.stdout.replace(/\s+/g, ' ').includes(`${entry.term} ${entry.summary}`), `--help shows ${name}'s term and summary`);
    }
  });

  it('--version, no command and an unknown command load no command module', () => {
    const v = traced(['--version'], 'version');
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^\d+\.\d+\.\d+/);
    assert.deepEqual(commandModules(v.loaded), []);
    const none = traced([], 'none');
    assert.equal(none.code, 2);
    assert.match(none.stderr, /Commands:[\s\S]*run \[options\]/);
    assert.deepEqual(commandModules(none.loaded), []);
    const unknown = traced(['reprot'], 'unknown');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command 'reprot'.*Did you mean report\?/);
    assert.deepEqual(commandModules(unknown.loaded), []);
  });

  it("the quick --help equals commander's help for the same table, byte for byte, at any width", async () => {
    for (const width of [80, 120, 200, 60, 44, 30]) {
      for (const flag of ['--help', '-h', 'help']) {
        let out = '';
        const program = await buildProgram({ out: (s) => (out += s), err: (s) => (out += s), errIsTTY: false }, [flag]);
        program.configureOutput({ getOutHelpWidth: () => width });
        await assert.rejects(program.parseAsync([flag], { from: 'user' }), (e: { exitCode?: number }) => e.exitCode === 0);
        assert.ok(out.includes('Commands:'), out);
        assert.equal(quickOutput([flag], width), out, `${flag} at width ${width}`);
      }
    }
    assert.equal(quickOutput(['--version'], 80), `${VERSION}\n`);
    assert.equal(quickOutput(['-V'], 80), `${VERSION}\n`);
    // Anything more goes through the full CLI (which then loads what it names).
    for (const argv of [[], ['run'], ['--help', 'run'], ['help', 'run'], ['--version', 'x'], ['--helpx']]) assert.equal(quickOutput(argv, 80), null, argv.join(' '));
  });

  it('CMD --help and help CMD load only CMD', () => {
    for (const args of [['compare', '--help'], ['help', 'compare']]) {
      const r = traced(args, args.join('-'));
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Usage: joulebench compare \[options\] \[runs\.\.\.\]/);
      assert.match(r.stdout, /--threshold|--json|Options:/);
      assert.deepEqual(commandModules(r.loaded), ['compare.js']);
    }
  });
});
