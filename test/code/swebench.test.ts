import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { CodeResults } from '../../src/code/results.js';
import { loadSwebenchSuite, patchedFiles, readSwebenchInstances, swebenchImage } from '../../src/code/swebench.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from './helpers.js';
import { buildSwebenchFixture } from './swebench-fixture.js';

const tmp = tempDir('jb-swebench-');
after(() => rmSync(tmp, { recursive: true, force: true }));
const { repos, repo, instances, jsonl } = buildSwebenchFixture(tmp);
const json = join(tmp, 'instances.json');
writeFileSync(json, JSON.stringify(instances.map((i) => ({ ...i, FAIL_TO_PASS: JSON.parse(i.FAIL_TO_PASS) as string[] }))));
const parquet = join(tmp, 'instances.parquet');
const cols = Object.keys(instances[0]!) as (keyof (typeof instances)[0])[];
writeFileSync(parquet, Buffer.from(parquetWriteBuffer({ columnData: cols.map((c) => ({ name: c, data: instances.map((i) => i[c]) })) })));

describe('SWE-bench-format instances', () => {
  test('JSON, JSONL and Parquet read to the same instances; lists may be JSON-encoded strings', async () => {
    const a = await readSwebenchInstances(jsonl);
    const b = await readSwebenchInstances(json);
    const c = await readSwebenchInstances(parquet);
    assert.deepEqual(a.map((i) => [i.instance_id, i.FAIL_TO_PASS]), [['acme__calc-1', ['test/add.test.js']], ['acme__calc-2', ['test/mul.test.js']]]);
    assert.deepEqual(b.map((i) => i.FAIL_TO_PASS), a.map((i) => i.FAIL_TO_PASS));
    assert.deepEqual(c.map((i) => [i.instance_id, i.base_commit, i.FAIL_TO_PASS, i.PASS_TO_PASS]), a.map((i) => [i.instance_id, i.base_commit, i.FAIL_TO_PASS, i.PASS_TO_PASS]));
    assert.deepEqual(patchedFiles(a[0]!.test_patch), ['test/add.test.js']);
    assert.equal(swebenchImage('astropy__astropy-12907'), 'swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest');
  });

  test('checkout base_commit, hidden test_patch, FAIL_TO_PASS / PASS_TO_PASS: reference resolves both, noop none, no history leaks', async () => {
    const suite = await loadSwebenchSuite(parquet, { repos_dir: repos, test_cmd: 'node {test}' });
    assert.deepEqual(suite.tasks.map((t) => t.name), ['acme__calc-1', 'acme__calc-2']);
    assert.equal(readFileSync(join(suite.tasks[0]!.before_dir, 'src/add.js'), 'utf8'), 'export const add = (a, b) => a - b;\n');

    const out = join(tmp, 'r.json');
    const peek = `peek=cmd:echo "commits=$(git log --all --oneline | wc -l)"; ls ${repo}/src >/dev/null 2>&1 && echo MIRROR-VISIBLE; ls test`;
    const r = await cli(['code', '--suite', jsonl, '--repos', repos, '--test-cmd', 'node {test}', '--solvers', 'reference', '-q', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    const out2 = join(tmp, 'r2.json');
    const r2 = await cli(['code', '--suite', jsonl, '--tasks', 'acme__calc-1', '--repos', repos, '--test-cmd', 'node {test}', '--solvers', `noop,${peek}`, '-q', '--out', out2]);
    assert.equal(r2.code, 0, r2.stderr);
    const res = JSON.parse(readFileSync(out, 'utf8')) as CodeResults;
    const res2 = JSON.parse(readFileSync(out2, 'utf8')) as CodeResults;
    const by = (s: string) => [...res.datapoints, ...res2.datapoints].filter((d) => d.solver === s);
    assert.deepEqual(by('reference').map((d) => d.resolved), [true, true]);
    assert.deepEqual(by('noop').map((d) => d.resolved), [false]);
    for (const d of [...res.datapoints, ...res2.datapoints]) assert.equal(d.valid, true, d.invalid_reason ?? '');
    assert.deepEqual(by('reference')[0]?.baseline.tests, { 'test/add.test.js': 'fail', 'test/keep.test.js': 'pass' });
    assert.deepEqual(by('reference')[0]?.grade?.tests, { 'test/add.test.js': 'pass', 'test/keep.test.js': 'pass' });
    const tail = by('peek')[0]?.solver_run?.output_tail ?? '';
    assert.match(tail, /commits=1\b/, tail);
    assert.doesNotMatch(tail, /MIRROR-VISIBLE|add\.test\.js/, tail);
  });

  test('missing --repos / --test-cmd, a missing mirror and --runner docker without an engine: one line, exit 2', async () => {
    const noRepos = await cli(['code', '--suite', jsonl, '--test-cmd', 'node {test}']);
    assert.equal(noRepos.code, 2);
    assert.match(noRepos.stderr, /need --repos DIR/);
    const noMirror = await cli(['code', '--suite', jsonl, '--repos', tmp, '--test-cmd', 'node {test}']);
    assert.equal(noMirror.code, 2);
    assert.match(noMirror.stderr, /no git mirror of acme\/calc/);
    const docker = await cli(['code', '--suite', jsonl, '--repos', repos, '--test-cmd', 'node {test}', '--runner', 'docker']);
    assert.equal(docker.code, 2);
    assert.match(docker.stderr, /^joulebench: --runner docker: /);
    assert.equal(docker.stderr.trim().split('\n').length, 1);
  });
});
