import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { MODEL_CATALOG, catalogModel, DEFAULT_CATALOG_MODEL } from '../../src/targets/llamacpp/catalog.js';
import { downloadVerified } from '../../src/targets/llamacpp/download.js';
import { fetchCommand } from '../../src/cli/commands/fetch.js';
import { cli } from '../helpers/cli.js';
import { listenOnLoopback } from '../helpers/fake-openai.js';
import { tinyLlamaGguf } from '../helpers/tiny-gguf.js';

const MODEL = tinyLlamaGguf();
const SHA = createHash('sha256').update(MODEL).digest('hex');
const OTHER = tinyLlamaGguf({ seed: 7 });

let dir: string;
let base: string;
let close: () => Promise<void>;
/** Requests the server saw, by path. */
const hits = new Map<string, number>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'jb-fetch-model-'));
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/model.gguf') {
      res.writeHead(200, { 'content-length': MODEL.length, 'content-type': 'application/octet-stream' });
      return res.end(MODEL);
    }
    if (path === '/chunked.gguf') {
      // No Content-Length: only the pinned size and the hash can catch a short body.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write(MODEL.subarray(0, 1000));
      return res.end(MODEL.subarray(1000));
    }
    if (path === '/other.gguf') {
      res.writeHead(200, { 'content-length': OTHER.length });
      return res.end(OTHER);
    }
    if (path === '/redirect') {
      res.writeHead(302, { location: '/model.gguf?X-Amz-Signature=cdnsecret123' });
      return res.end();
    }
    if (path === '/to-file') {
      res.writeHead(302, { location: 'file:///etc/passwd' });
      return res.end();
    }
    if (path === '/loop') {
      res.writeHead(302, { location: '/loop' });
      return res.end();
    }
    if (path === '/to-metadata') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (path === '/dies') {
      // Declares the whole file, sends half, then the connection drops.
      res.writeHead(200, { 'content-length': MODEL.length });
      res.write(MODEL.subarray(0, MODEL.length >> 1), () => setTimeout(() => res.socket?.destroy(), 20));
      return undefined;
    }
    res.writeHead(404);
    return res.end('no such file');
  });
  const l = await listenOnLoopback(server);
  base = l.url.replace(/\/v1$/, '');
  close = l.close;
});
after(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A fresh folder for one test. */
function fresh(): string {
  const d = join(dir, `t${n++}`);
  mkdirSync(d);
  return d;
}

const isCode = (code: string, re: RegExp) => (e: unknown) => e instanceof JoulebenchError && e.code === code && re.test(e.message) && !e.message.includes('\n');

describe('downloadVerified', () => {
  it('streams through a .part file, checks hash and size, renames; a redirect is followed', async () => {
    const d = fresh();
    const dest = join(d, 'models', 'default.gguf');
    const seen: number[] = [];
    const r = await downloadVerified({ url: `${base}/redirect`, sha256: SHA, bytes: MODEL.length, dest, onProgress: (got) => seen.push(got) });
    assert.deepEqual(r, { path: dest, sha256: SHA, bytes: MODEL.length, downloaded: true });
    assert.deepEqual(readFileSync(dest), MODEL);
    assert.deepEqual(readdirSync(join(d, 'models')), ['default.gguf'], 'no part file left');
    assert.equal(seen.at(-1), MODEL.length, 'progress ends at the full size');
  });

  it('an existing verified file is not downloaded again', async () => {
    const d = fresh();
    const dest = join(d, 'default.gguf');
    await downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, dest });
    const before = hits.get('/model.gguf');
    const again = await downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, bytes: MODEL.length, dest });
    assert.equal(again.downloaded, false);
    assert.equal(hits.get('/model.gguf'), before, 'no request was made');
  });

  it('bytes with another hash are refused and nothing is left', async () => {
    const d = fresh();
    const dest = join(d, 'default.gguf');
    await assert.rejects(downloadVerified({ url: `${base}/other.gguf`, sha256: SHA, dest }), isCode('E_INPUT', /have sha256 [0-9a-f]{64}, expected [0-9a-f]{64}: refused/));
    assert.deepEqual(readdirSync(d), []);
  });

  it('a size other than the pinned one is refused: declared up front, or counted at the end', async () => {
    const d = fresh();
    const dest = join(d, 'default.gguf');
    await assert.rejects(downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, bytes: MODEL.length + 1, dest }), isCode('E_INPUT', /offers \d+ bytes, the pinned file has \d+/));
    await assert.rejects(downloadVerified({ url: `${base}/chunked.gguf`, sha256: SHA, bytes: MODEL.length + 1, dest }), isCode('E_INPUT', /got \d+ bytes, the pinned file has \d+/));
    await assert.rejects(downloadVerified({ url: `${base}/chunked.gguf`, sha256: SHA, bytes: MODEL.length - 1, dest }), isCode('E_INPUT', /more than the pinned \d+ bytes/));
    assert.deepEqual(readdirSync(d), []);
  });

  it('a server that dies mid-body leaves neither the file nor a part file', async () => {
    const d = fresh();
    const dest = join(d, 'default.gguf');
    await assert.rejects(downloadVerified({ url: `${base}/dies`, sha256: SHA, bytes: MODEL.length, dest }), isCode('E_RUN', /broke off/));
    assert.deepEqual(readdirSync(d), []);
  });

  it('two fetches at once never install each other\'s unfinished bytes', async () => {
    const d = fresh();
    const dest = join(d, 'default.gguf');
    const [dies, ok, ok2] = await Promise.allSettled([
      downloadVerified({ url: `${base}/dies`, sha256: SHA, dest }),
      downloadVerified({ url: `${base}/chunked.gguf`, sha256: SHA, dest }),
      downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, dest }),
    ]);
    assert.equal(dies.status, 'rejected');
    assert.equal(ok.status, 'fulfilled');
    assert.equal(ok2.status, 'fulfilled');
    assert.deepEqual(readFileSync(dest), MODEL);
    assert.deepEqual(readdirSync(d), ['default.gguf']);
  });

  it('metadata addresses are refused, as the URL and as a redirect target', async () => {
    const d = fresh();
    const dest = join(d, 'default.gguf');
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/x', 'http://100.100.100.200/x']) {
      await assert.rejects(downloadVerified({ url, sha256: SHA, dest }), isCode('E_INPUT', /refusing to connect/), url);
    }
    await assert.rejects(downloadVerified({ url: `${base}/to-metadata`, sha256: SHA, dest }), isCode('E_INPUT', /refusing to connect to 169\.254\.169\.254/));
    await assert.rejects(downloadVerified({ url: `${base}/to-file`, sha256: SHA, dest }), isCode('E_RUN', /redirected to a file: URL: refused/));
    const loops = hits.get('/loop') ?? 0;
    await assert.rejects(downloadVerified({ url: `${base}/loop`, sha256: SHA, dest, max_redirects: 3 }), isCode('E_RUN', /more than 3 redirects/));
    assert.equal(hits.get('/loop'), loops + 4, 'the first request and 3 redirects, no more');
    assert.deepEqual(readdirSync(d), []);
  });

  it('a planted part-file link is never written through; an existing different file is left as is', async () => {
    const d = fresh();
    const victim = join(d, 'victim.txt');
    writeFileSync(victim, 'keep me');
    const dest = join(d, 'default.gguf');
    symlinkSync(victim, `${dest}.part`);
    await downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, dest });
    assert.equal(readFileSync(victim, 'utf8'), 'keep me');
    assert.deepEqual(readFileSync(dest), MODEL);
    assert.deepEqual(readdirSync(d).sort(), ['default.gguf', 'default.gguf.part', 'victim.txt'], 'its own part file is gone');

    const mine = join(d, 'mine.gguf');
    writeFileSync(mine, 'my own model');
    await assert.rejects(downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, dest: mine }), isCode('E_OUTPUT', /exists with sha256 .* left as is/));
    assert.equal(readFileSync(mine, 'utf8'), 'my own model');
    const link = join(d, 'link.gguf');
    symlinkSync(victim, link);
    await assert.rejects(downloadVerified({ url: `${base}/model.gguf`, sha256: SHA, dest: link }), isCode('E_OUTPUT', /not a regular file/));
  });

  it('credential-shaped query parameters never reach a message; bad --sha256 and URLs are usage errors', async () => {
    const d = fresh();
    await assert.rejects(downloadVerified({ url: `${base}/other.gguf?token=hunter2secret`, sha256: SHA, dest: join(d, 'x.gguf') }), (e: Error) => !e.message.includes('hunter2secret'));
    await assert.rejects(downloadVerified({ url: `${base}/nope?api_key=hunter2secret`, sha256: SHA, dest: join(d, 'x.gguf') }), (e: Error) => /HTTP 404/.test(e.message) && !e.message.includes('hunter2secret'));
    await assert.rejects(downloadVerified({ url: `${base}/model.gguf`, sha256: 'abc', dest: join(d, 'x.gguf') }), isCode('E_USAGE', /64 hex digits/));
    await assert.rejects(downloadVerified({ url: 'file:///etc/passwd', sha256: SHA, dest: join(d, 'x.gguf') }), isCode('E_USAGE', /http\(s\)/));
  });
});

describe('model catalog', () => {
  it('pins each model to a revision, a sha256 and a size', () => {
    assert.ok(catalogModel(DEFAULT_CATALOG_MODEL));
    for (const m of MODEL_CATALOG) {
      assert.match(m.url, /^https:\/\/huggingface\.co\/[^/]+\/[^/]+\/resolve\/[0-9a-f]{40}\//, `${m.name}: a URL pinned to a commit`);
      assert.match(m.sha256 ?? '', /^[0-9a-f]{64}$/);
      assert.ok(m.bytes !== null && m.bytes > 100e6 && m.bytes < 1e9, 'a ~0.5B Q4 model is a few hundred MB');
    }
  });
});

describe('joulebench fetch model (CLI)', () => {
  it('installs a verified model where the embedded default finds it, which then answers as its neural stage', async () => {
    const home = join(fresh(), 'home');
    const r = await cli(['fetch', 'model', '--url', `${base}/model.gguf`, '--sha256', SHA.toUpperCase()], { env: { JOULEBENCH_HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /wrote .*models[\\/]default\.gguf \(\d+ bytes, sha256 [0-9a-f]{64} verified\)/);
    assert.deepEqual(readFileSync(join(home, 'models', 'default.gguf')), MODEL);
    const again = await cli(['fetch', 'model', '--url', `${base}/model.gguf`, '--sha256', SHA], { env: { JOULEBENCH_HOME: home } });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /already there .* not downloaded again/);
    const out = join(home, 'run.json');
    const run = await cli(['run', '--suite', 'router', '--threads', '1', '--max-tokens', '2', '--no-history', '-o', out], { env: { JOULEBENCH_HOME: home } });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout.split('\n')[0]!, /^neural stage: llamacpp, .*models[\\/]default\.gguf$/);
  });

  it('shows progress on a terminal (and only the result lines otherwise)', async () => {
    const d = fresh();
    const run = async (tty: boolean) => {
      let err = '';
      const cmd = fetchCommand({ out: () => undefined, err: (s) => void (err += s), errIsTTY: tty });
      await cmd.parseAsync(['model', '--url', `${base}/model.gguf`, '--sha256', SHA, '-o', join(d, `${tty}.gguf`)], { from: 'user' });
      return err;
    };
    const tty = await run(true);
    assert.match(tty, /\rfetch model: 0\.\d MB of 0\.\d MB \(100%\)/);
    const plain = await run(false);
    assert.ok(!plain.includes('\r'), 'no carriage returns in a log');
    assert.match(plain, /^fetch model: downloading http:\/\/127\.0\.0\.1:\d+\/model\.gguf\nwrote /);
  });

  it('a hash mismatch exits 2 with one line and installs nothing', async () => {
    const home = join(fresh(), 'home');
    const r = await cli(['fetch', 'model', '--url', `${base}/other.gguf`, '--sha256', SHA], { env: { JOULEBENCH_HOME: home } });
    assert.equal(r.code, 2);
    const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('fetch model: downloading'));
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /sha256 .* refused \(nothing kept\)/);
    assert.equal(existsSync(join(home, 'models', 'default.gguf')), false);
    assert.deepEqual(readdirSync(join(home, 'models')), []);
  });

  it('refuses unverified or unknown models, and a server that dies mid-body exits 1 leaving no default.gguf', async () => {
    const home = join(fresh(), 'home');
    const noHash = await cli(['fetch', 'model', '--url', `${base}/model.gguf`], { env: { JOULEBENCH_HOME: home } });
    assert.equal(noHash.code, 2);
    assert.match(noHash.stderr, /needs --sha256/);
    const unknown = await cli(['fetch', 'model', 'no-such-model'], { env: { JOULEBENCH_HOME: home } });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown model "no-such-model" \(known: qwen2\.5-0\.5b-instruct-q4_k_m/);
    const dies = await cli(['fetch', 'model', '--url', `${base}/dies`, '--sha256', SHA, '-o', join(home, 'x', 'm.gguf')], { env: { JOULEBENCH_HOME: home } });
    assert.equal(dies.code, 1);
    assert.match(dies.stderr, /broke off/);
    assert.deepEqual(readdirSync(join(home, 'x')), []);
    const meta = await cli(['fetch', 'model', '--url', 'http://169.254.169.254/latest/meta-data/', '--sha256', SHA], { env: { JOULEBENCH_HOME: home } });
    assert.equal(meta.code, 2);
    assert.match(meta.stderr, /refusing to connect/);
  });
});
