import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertHostAllowed, isForbiddenAddress } from '../../src/targets/openai/guard.js';
import { redactQuery } from '../../src/targets/openai/redact.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const SECRET = 'qs-SECRET-4b1d9e';
const dir = mkdtempSync(join(tmpdir(), 'jb-guard-'));
let server: FakeServer;
before(async () => {
  server = await startFakeOpenAI(() => ({ kind: 'plain', text: 'Paris', usage: { prompt_tokens: 1, completion_tokens: 1 } }));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function everyFile(d: string): [string, Buffer][] {
  return readdirSync(d).flatMap((f): [string, Buffer][] => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? everyFile(p) : [[p, readFileSync(p)]];
  });
}

describe('metadata guard, everywhere', () => {
  it('refuses Alibaba Cloud and AWS IPv6 metadata addresses, in every spelling', async () => {
    for (const ip of ['100.100.100.200', '::ffff:100.100.100.200', '[::ffff:6464:64c8]', 'fd00:ec2::254', '[fd00:ec2::254]', '169.254.169.254']) {
      assert.equal(isForbiddenAddress(ip), true, ip);
      await assert.rejects(assertHostAllowed(ip), /cloud-metadata/, ip);
    }
    assert.equal(isForbiddenAddress('100.100.100.201'), false);
    await assertHostAllowed('127.0.0.1');
  });

  for (const url of ['http://100.100.100.200:11434', 'http://[fd00:ec2::254]:11434', 'http://0xA9FEA9FE:11434']) {
    it(`the ollama target and infer --base-url refuse ${url} before any request (exit 2)`, async () => {
      const run = await cli(['run', '--suite', 'router', '--target', 'ollama', '--model', 'm', '--base-url', url, '--no-history', '-q', '-o', join(dir, 'o.json')]);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /link-local or cloud-metadata address/);
      const infer = await cli(['infer', '--model', 'm', '--base-url', url, '-o', join(dir, 'i.json')]);
      assert.equal(infer.code, 2, infer.stderr);
      assert.match(infer.stderr, /link-local or cloud-metadata address/);
    });
  }

  it('redactQuery: api-key, key, token and their kin; other parameters stay', () => {
    assert.equal(redactQuery('https://h/v1?api-key=abc&api-version=2024'), 'https://h/v1?api-key=[REDACTED]&api-version=2024');
    assert.equal(redactQuery('GET /x?key=abc'), 'GET /x?key=[REDACTED]');
    assert.equal(redactQuery('u?a=1&token=abc#f'), 'u?a=1&token=[REDACTED]#f');
    assert.equal(redactQuery('u?access_token=abc&subscription-key=def'), 'u?access_token=[REDACTED]&subscription-key=[REDACTED]');
    assert.equal(redactQuery('u?monkey=1'), 'u?monkey=1');
  });

  it('a key in the endpoint query string never reaches the results, report, receipt, history, HTML or stderr', async () => {
    const home = join(dir, 'home');
    const endpoint = `${server.url}?api-key=${SECRET}&api-version=1`;
    const out = join(dir, 'run', 'report.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', endpoint, '--model', 'm', '--meter', 'model', '-o', out], { env: { JOULEBENCH_HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    // The request still carries it to the server, on the right path.
    assert.equal(server.seen.at(-1)?.url, `/v1/chat/completions?api-key=${SECRET}&api-version=1`);
    const html = await cli(['report', out, '--html', join(dir, 'run', 'report.html')], { env: { JOULEBENCH_HOME: home } });
    assert.equal(html.code, 0, html.stderr);
    const receipt = readFileSync(join(dir, 'run', 'report.receipt.json'), 'utf8');
    assert.match(receipt, /api-key=\[REDACTED\]&api-version=1/);
    // Dead endpoint: every error line too.
    const dead = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', `http://127.0.0.1:1/v1?token=${SECRET}`, '--model', 'm', '--meter', 'model', '--max-errors', '2', '-o', join(dir, 'run', 'dead.json')], {
      env: { JOULEBENCH_HOME: home },
    });
    assert.equal(dead.code, 1);
    const bad = await cli(['run', '--target', 'openai', '--endpoint', `h/v1?key=${SECRET}`, '--model', 'm'], { env: { JOULEBENCH_HOME: home } });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /key=\[REDACTED\]/);
    for (const s of [r.stdout, r.stderr, html.stdout, html.stderr, dead.stdout, dead.stderr, bad.stderr]) assert.equal(s.includes(SECRET), false, s);
    const files = [...everyFile(join(dir, 'run')), ...everyFile(home)];
    assert.ok(files.some(([p]) => p.endsWith('history.sqlite')));
    for (const [p, bytes] of files) assert.equal(bytes.includes(SECRET), false, `the key is in ${p}`);
  });
});
