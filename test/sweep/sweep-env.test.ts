import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BIN, cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { writePowercapTree } from '../meters/powercap-tree.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-sweep-env-'));
const rapl = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1000 }]);
after(() => {
  rmSync(dir, { recursive: true, force: true });
  rapl.cleanup();
});
const plan = (name: string, arms: string): string => {
  const p = join(dir, `${name}.yaml`);
  writeFileSync(p, `name: ${name}\nsuites: [mt]\narms:\n${arms}`);
  return p;
};

describe('a sweep honours the environment run does, and says each failure once', () => {
  let server: FakeServer;
  before(async () => {
    server = await startFakeOpenAI(() => ({ kind: 'plain', text: '391', usage: { prompt_tokens: 5, completion_tokens: 1 } }));
  });
  after(() => server.close());

  it('JOULEBENCH_POWERCAP_ROOT reaches every arm (meter rapl), as it reaches run', async () => {
    const p = plan('rapl', '  - name: a\n    kind: echo\n    meter: rapl\n  - name: b\n    kind: echo\n    meter: rapl\n');
    const r = await cli(['sweep', p, '--out-dir', join(dir, 'rapl-out'), '--no-history', '--no-idle', '--bootstrap', '0', '-q'], { env: { JOULEBENCH_POWERCAP_ROOT: rapl.root } });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(join(dir, 'rapl-out', 'b', 'mt.json'), 'utf8')) as { energy_source: string };
    assert.equal(report.energy_source, 'rapl');
  });

  it('OPENAI_BASE_URL and OPENAI_API_KEY reach an openai arm; a failed arm is printed once, with its error', async () => {
    const p = plan('fail', '  - name: down\n    kind: openai\n    endpoint: http://127.0.0.1:9/v1\n    model: m\n  - name: env\n    kind: openai\n    model: m\n');
    const before = server.seen.length;
    const r = await cli(['sweep', p, '--out-dir', join(dir, 'fail-out'), '--no-history', '--no-idle', '--bootstrap', '0'], {
      env: { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-sweep-env' },
    });
    assert.equal(r.code, 1, r.stderr);
    const asked = server.seen.slice(before);
    assert.ok(asked.filter((s) => s.url.endsWith('/chat/completions')).length >= 20, 'the env arm asked the fake server every mt case (some have two turns)');
    assert.ok(asked.every((s) => s.headers.authorization === 'Bearer sk-sweep-env'));
    assert.equal(r.stderr.split('ECONNREFUSED').length - 1, 1, r.stderr);
    assert.match(r.stderr, /sweep: failed down × mt: .*ECONNREFUSED/);
    assert.match(r.stderr, /missing: down × mt: failed \(above\)/);
    // Quiet or not, a failure reaches a person.
    const q = await cli(['sweep', p, '--out-dir', join(dir, 'fail-q'), '--no-history', '--no-idle', '--bootstrap', '0', '-q'], { env: { OPENAI_BASE_URL: `${server.url}/v1` } });
    assert.equal(q.code, 1);
    assert.equal(q.stderr.split('ECONNREFUSED').length - 1, 1, q.stderr);
  });
});

const hasScript = spawnSync('script', ['--version']).status === 0;
describe('progress inside an arm', { skip: hasScript ? false : 'util-linux script is not installed' }, () => {
  it("is run's progress bar on stderr when it is a terminal", () => {
    const p = plan('bar', '  - name: a\n    kind: echo\n');
    const out = execFileSync('script', ['-qec', `${process.execPath} ${BIN} sweep ${p} --out-dir ${join(dir, 'bar-out')} --no-history --no-idle --bootstrap 0`, '/dev/null'], {
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: join(dir, 'home') },
      encoding: 'utf8',
    });
    assert.match(out, /joulebench [█░]+ \d+\/20 cases/);
  });
});
