import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { buildTargetSpec } from '../../src/session/setup.js';
import { mockAnswer } from '../../src/targets/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-conv-'));
const SECRET = 'sk-test-d0-not-leak-7f3a9c';
const OTHER = 'sk-other-key-81b2';
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
/** Every file under the folder, read as text. */
function everyFile(d: string): string[] {
  return readdirSync(d, { recursive: true, encoding: 'utf8' })
    .map((f) => join(d, f))
    .filter((p) => statSync(p).isFile())
    .map((p) => readFileSync(p, 'latin1'));
}
const lines = (p: string): Record<string, unknown>[] =>
  readFileSync(p, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the OpenAI SDK environment: OPENAI_BASE_URL and OPENAI_API_KEY', () => {
  let server: FakeServer;
  before(async () => {
    server = await startFakeOpenAI(() => ({ kind: 'plain', text: '42', usage: { prompt_tokens: 5, completion_tokens: 1 } }));
  });
  after(() => server.close());

  it('are used when no flag or config names an endpoint or key; the key is named in the receipt, its value written nowhere', async () => {
    const out = join(dir, 'env-run');
    const before = server.seen.length;
    const r = await cli(['run', '-s', 'mt', '--target', 'openai', '--model', 'm', '--limit', '2', '-o', join(out, 'r.json'), '--no-history'], {
      env: { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: SECRET },
    });
    assert.equal(r.code, 0, r.stderr);
    const seen = server.seen.slice(before);
    assert.equal(seen.length, 2);
    for (const s of seen) assert.equal(s.headers.authorization, `Bearer ${SECRET}`);
    const receipt = JSON.parse(readFileSync(join(out, 'r.receipt.json'), 'utf8')) as { target: Record<string, unknown> };
    assert.equal(receipt.target.credentials_ref, 'env:OPENAI_API_KEY');
    assert.equal(receipt.target.endpoint, `${server.url}/v1`);
    for (const text of [r.stdout, r.stderr, ...everyFile(out)]) assert.ok(!text.includes(SECRET), 'the key value appears in an output');
  });

  it('flags and the config win over them', async () => {
    const cfg = file('keyed.yaml', `target:\n  kind: openai\n  endpoint: ${server.url}/v1\n  model: m\n  credentials_ref: env:MY_KEY\n`);
    const before = server.seen.length;
    // OPENAI_BASE_URL names a port nothing listens on: the config's endpoint is the one asked.
    const r = await cli(['run', '-s', 'mt', '--config', cfg, '--limit', '1', '-o', join(dir, 'cfg-wins', 'r.json'), '--no-history'], {
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: SECRET, MY_KEY: OTHER },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.seen.slice(before)[0]?.headers.authorization, `Bearer ${OTHER}`);
    const flag = await cli(['run', '-s', 'mt', '--target', 'openai', '--endpoint', `${server.url}/v1`, '--model', 'm', '--limit', '1', '-o', join(dir, 'flag-wins', 'r.json'), '--no-history'], {
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
    assert.equal(flag.code, 0, flag.stderr);
  });

  it('without any of them the endpoint is the SDK default, https://api.openai.com/v1; a bad OPENAI_BASE_URL is named', async () => {
    assert.equal(buildTargetSpec({ suite: 'mt', target: 'openai', model: 'm' }, null, {}).endpoint, 'https://api.openai.com/v1');
    assert.equal(buildTargetSpec({ suite: 'mt', target: 'openai', model: 'm' }, null, {}).api_key, undefined);
    const r = await cli(['run', '-s', 'mt', '--target', 'openai', '--model', 'm', '--no-history', '-q'], { env: { OPENAI_BASE_URL: 'ftp://x' } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /OPENAI_BASE_URL must use http or https/);
  });

  it('run --help says so', async () => {
    const r = await cli(['run', '--help']);
    assert.match(r.stdout, /OPENAI_BASE_URL/);
    assert.match(r.stdout, /OPENAI_API_KEY/);
  });
});

describe('run --config takes every target kind a sweep arm takes', () => {
  const ollama = new FakeOllama({ models: { tiny: { parameter_count: 1e9 } }, load_ms: 1, prefill_ms_per_token: 0.01, decode_tok_s: () => 100, reply: () => '391' });
  let ollamaUrl = '';
  before(async () => {
    ollamaUrl = await ollama.start();
  });
  after(() => ollama.stop());

  it('kind: ollama, with model and base_url from the config', async () => {
    const cfg = file('ollama.yaml', `target:\n  kind: ollama\n  model: tiny\n  base_url: ${ollamaUrl}\n`);
    const r = await cli(['run', '-s', 'mt', '--config', cfg, '--limit', '1', '-o', join(dir, 'ollama', 'r.json'), '--no-history', '-q']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(join(dir, 'ollama', 'r.json'), 'utf8')) as { target: string; accuracy_pct: number };
    assert.match(report.target, /^ollama/);
    assert.equal(report.accuracy_pct, 100);
  });

  it("kind: echo with the kind's own setting (energy_j), as an arm writes it", async () => {
    const cfg = file('echo.yaml', 'target:\n  kind: echo\n  energy_j: 7\n');
    const r = await cli(['run', '-s', 'mt', '--config', cfg, '--limit', '2', '-o', join(dir, 'echo', 'r.json'), '--no-history', '-q', '--meter', 'model']);
    assert.equal(r.code, 0, r.stderr);
    const receipt = JSON.parse(readFileSync(join(dir, 'echo', 'r.receipt.json'), 'utf8')) as { target: Record<string, unknown> };
    assert.equal(receipt.target.energy_j_per_inference, 7);
  });

  it('an unknown key on an openai target is still refused, naming it', async () => {
    const cfg = file('typo.yaml', 'target:\n  kind: openai\n  model: m\n  endpont: http://127.0.0.1:9/v1\n');
    const r = await cli(['run', '-s', 'mt', '--config', cfg, '--no-history', '-q']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /target\.endpont: unknown key/);
  });
});

describe('the CI path: --suite mmlu with `mode: mock` alone, offline', () => {
  it('runs the bundled sample (≥ 20 questions, ≥ 4 subjects), each answered with the letter from its id, the same every time', async () => {
    const cfg = file('mock.yaml', 'target:\n  mode: mock\n');
    const runs = [];
    for (const name of ['a', 'b']) {
      const r = await cli(['run', '--suite', 'mmlu', '--config', cfg, '-o', join(dir, `mock-${name}.json`), '--no-history'], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      runs.push(JSON.parse(readFileSync(join(dir, `mock-${name}.json`), 'utf8')) as { accuracy_pct: number; suite: { version: string; digest: string } });
    }
    assert.deepEqual(runs[0], { ...runs[0]!, suite: runs[1]!.suite, accuracy_pct: runs[1]!.accuracy_pct });
    assert.equal(runs[0]!.suite.version, 'joulebench-mmlu/sample-1');
    const cases = lines(join(dir, 'mock-a.results.jsonl')).filter((l) => l.record === 'case');
    assert.ok(cases.length >= 20, `${cases.length} cases`);
    assert.ok(new Set(cases.map((c) => c.dataset)).size >= 4);
    // As docs/suites.md states it: "ABCD"[sha256(case id)[0] mod 4].
    for (const c of cases) assert.equal(c.response, 'ABCD'[createHash('sha256').update(String(c.case_id)).digest()[0]! % 4]);
    assert.equal(mockAnswer('astronomy-0'), cases.find((c) => c.case_id === 'astronomy-0')?.response);
  });

  it('--data still overrides the sample', async () => {
    const data = file('own.jsonl', '{"question":"2+2?","subject":"toy","choices":["1","4","3","2"],"answer":1}\n');
    const cfg = file('mock2.yaml', 'target:\n  mode: mock\n');
    const r = await cli(['run', '--suite', 'mmlu', '--data', data, '--config', cfg, '-o', join(dir, 'own.json'), '--no-history', '-q']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lines(join(dir, 'own.results.jsonl')).filter((l) => l.record === 'case').length, 1);
  });
});

after(() => rmSync(dir, { recursive: true, force: true }));
