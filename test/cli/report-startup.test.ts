import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN } from '../helpers/cli.js';

// `report`, `compare` and `frontier` of a results file load only what it needs: not zod, execa, the
// CSV writer, the scorers' regex engine, the runner, or the code/infer readers (start-up time and
// ~15 MB of RSS each). A module-loader hook (own thread) logs every module URL the CLI loads.
const dir = mkdtempSync(join(tmpdir(), 'jb-report-startup-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'hooks.mjs'), "import { appendFileSync } from 'node:fs';\nexport async function load(url, ctx, next) { appendFileSync(process.env.JB_LOADED, url + '\\n'); return next(url, ctx); }\n");
writeFileSync(join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
const env = { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: dir };

function traced(args: string[], name: string): { code: number | null; stdout: string; stderr: string; loaded: string[] } {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), BIN, ...args], { encoding: 'utf8', env: { ...env, JB_LOADED: log } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

/** Loaded modules that a results file's report does not need. */
function unneeded(loaded: string[]): string[] {
  const packages = /\/node_modules\/(zod|execa|csv-stringify|re2js|better-sqlite3|playwright-core|bullmq)\//;
  const own = /\/dist\/(code\/(?!datapoints-file\.js)|infer\/(protocol|host|load|journal|llamacpp)\.js|targets\/(?!openai\/redact\.js)|runner\/run\.js|load\/driver\.js|scorers\/|suites\/(?!retry-label\.js)|meters\/|report\/load\.js|report\/csv\.js|report\/html\/|cli\/commands\/(?!report|compare|frontier))/;
  return loaded.filter((u) => packages.test(u) || own.test(u));
}

describe('report, compare and frontier of a results file: lazy start-up', () => {
  let results = '';
  before(() => {
    const r = spawnSync(process.execPath, [BIN, 'run', '-q', '--no-history', '--suite', 'router', '-o', join(dir, 'a.json')], { encoding: 'utf8', env });
    assert.equal(r.status, 0, r.stderr);
    results = join(dir, 'a.results.jsonl');
  });

  it('report --json loads none of the other readers, zod, execa or the runner', () => {
    const r = traced(['report', '--json', results], 'report');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).case_count, JSON.parse(readFileSync(join(dir, 'a.json'), 'utf8')).case_count);
    // The hook saw the rebuild load (so an empty list below means something).
    assert.ok(r.loaded.some((u) => u.endsWith('/dist/report/rebuild.js')), r.loaded.join('\n'));
    assert.deepEqual(unneeded(r.loaded), []);
  });

  it('compare --json and frontier --json of results files load none of them either', () => {
    const c = traced(['compare', '-q', '--bootstrap', '50', results, results], 'compare');
    assert.equal(c.code, 0, c.stderr);
    assert.ok(c.loaded.some((u) => u.endsWith('/dist/report/rebuild.js')));
    assert.deepEqual(unneeded(c.loaded), []);
    const f = traced(['frontier', '--json', results], 'frontier');
    assert.equal(f.code, 0, f.stderr);
    assert.ok(f.loaded.some((u) => u.endsWith('/dist/report/rebuild.js')));
    assert.deepEqual(unneeded(f.loaded), []);
  });

  it('the table and a report JSON input still load their renderers and readers on use', () => {
    const t = traced(['report', results], 'table');
    assert.equal(t.code, 0, t.stderr);
    assert.ok(t.loaded.some((u) => u.endsWith('/dist/report/table.js')));
    const j = traced(['report', '--json', join(dir, 'a.json')], 'report-json-file');
    assert.equal(j.code, 0, j.stderr);
    assert.ok(j.loaded.some((u) => u.endsWith('/dist/report/load.js')) && j.loaded.some((u) => /\/node_modules\/zod\//.test(u)));
  });
});

describe('view: hono and the viewer load only when it serves', () => {
  it('--help and a refused --host load neither hono nor the server', () => {
    const server = (loaded: string[]) => loaded.filter((u) => /\/node_modules\/(hono|@hono)\/|\/dist\/view\/(server|pages|sources)\.js/.test(u));
    const help = traced(['--help'], 'help');
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /view \[options\] \[paths\.\.\.\]/);
    assert.deepEqual(server(help.loaded), []);
    const refused = traced(['view', '--no-open', '--host', '0.0.0.0'], 'view-refused');
    assert.equal(refused.code, 2);
    assert.ok(refused.loaded.some((u) => u.endsWith('/dist/cli/commands/view.js')), 'the hook saw the command load');
    assert.deepEqual(server(refused.loaded), []);
  });
});
