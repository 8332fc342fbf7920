import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchChromium, overflow } from '../helpers/browser.js';
import { BIN, cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-view-'));
const home = join(dir, 'home');
const p = (f: string): string => join(dir, f);
const env = { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home, JB_VIEW_TOKEN: 'from-the-environment' };
const jb = (args: string[]) => cli(args, { cwd: dir, env: { JOULEBENCH_HOME: home } });
after(() => rmSync(dir, { recursive: true, force: true }));

/** `joulebench view … --no-open --port 0`, resolved with its URL once it listens. */
function startView(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, 'view', '--no-open', '--port', '0', ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /http:\/\/\S+\//.exec(out);
      if (m) resolve({ child, url: m[0] });
    });
    child.on('close', (code) => reject(new Error(`view exited ${code}: ${err}`)));
  });
}

function stopView(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('close');
    child.on('close', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('joulebench view', () => {
  let view: { child: ChildProcess; url: string };
  let browser: Browser | undefined;
  let openai: FakeServer | undefined;

  before(async () => {
    // Two suites in the history (ids 1–3, in this order): router, and a JSONL suite run by echo (c1 right) and mock (c1 wrong).
    writeFileSync(p('t.jsonl'), '{"id":"c1","prompt":"4","expected":"4"}\n{"id":"c2","prompt":"<script>alert(1)</script>","expected":"Paris"}\n');
    for (const args of [['-s', 'router', '-o', p('a.json')], ['-s', p('t.jsonl'), '-t', 'echo', '-o', p('e.json')], ['-s', p('t.jsonl'), '-t', 'mock', '-o', p('m.json')]]) {
      const r = await jb(['run', '-q', ...args]);
      assert.equal(r.code, 0, r.stderr);
    }
    // Results files written by hand: one with its prompts in the case lines, one whose header says none were stored.
    const lines = readFileSync(p('e.results.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const withPrompt = lines.map((l) => (l.record === 'case' && l.case_id === 'c1' ? { ...l, prompt: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'stored question: two plus two?' }] } : l));
    writeFileSync(p('stored.results.jsonl'), withPrompt.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const none = lines.map(({ prompt: _, ...l }) => (l.record === 'header' ? { ...l, suite_source: p('gone.jsonl'), prompts: 'none' } : l));
    writeFileSync(p('none.results.jsonl'), none.map((l) => JSON.stringify(l)).join('\n') + '\n');
    // A code run, a sweep folder and a rate sweep (of a fake OpenAI endpoint), none in the history.
    writeFileSync(p('plan.yaml'), 'name: v\nsuites: [router]\nbaseline: ref\narms:\n  - { name: ref, kind: cascade, meter: model }\n  - { name: small, kind: cascade, meter: model, cache_capacity: 1 }\n');
    openai = await startFakeOpenAI(() => ({ kind: 'stream', text: 'alpha', usage: { prompt_tokens: 6, completion_tokens: 6 }, chunkDelay_ms: 1 }));
    writeFileSync(p('rate-suite.jsonl'), '{"id":"r1","prompt":"say alpha","expected":"alpha"}\n');
    const rate = ['run', '-q', '--no-history', '--suite', p('rate-suite.jsonl'), '--target', 'openai', '--endpoint', openai.url, '--model', 'm', '--meter', 'model', '--num-requests', '4', '--cooldown-s', '0', '--request-rate', '30,inf', '-o', p('rate.json')];
    const others = await Promise.all([
      jb(['code', '-q', '--no-history', '--solvers', 'reference,noop', '--limit', '2', '--sandbox', 'none', '-o', p('agents.json')]),
      jb(['sweep', p('plan.yaml'), '--out-dir', p('sw'), '--no-idle', '--no-history', '--bootstrap', '200', '-q']),
      jb(rate),
    ]);
    for (const r of others) assert.equal(r.code, 0, r.stderr);
    // Named files are f0, f1, f2 in this order (then the sweep's arms); the sweep is s0, the rate sweep s1.
    view = await startView([p('stored.results.jsonl'), p('none.results.jsonl'), p('agents.json'), p('sw'), p('rate.json')]);
    if (!browserSkip) browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await openai?.close();
    if (view) assert.equal(await stopView(view.child), 0, 'view ends with 0 on SIGTERM');
  });

  const get = (path: string, init?: RequestInit) => fetch(new URL(path, view.url), init);

  it('serves only what it was given: paths in URLs, off-host names and writes are refused; every answer carries the CSP', async () => {
    for (const path of ['/run/..%2F..%2Fetc%2Fpasswd', '/run/%2Fetc%2Fpasswd', '/cases/..%2Fa.results.jsonl', '/assets/..%2F..%2Fpackage.json', '/assets/%2Fetc%2Fpasswd', `/report?k=${encodeURIComponent(p('a.json'))}`, '/run/h99', '/../../etc/passwd']) {
      const r = await get(path);
      assert.ok(r.status === 404 || r.status === 403, `${path}: ${r.status}`);
      assert.doesNotMatch(await r.text(), /root:|"name": "joulebench"/);
    }
    const r = await get('/');
    assert.match(r.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal((await get('/', { method: 'POST' })).status, 405);
    // fetch cannot set Host: a plain request, as a page whose name was rebound to 127.0.0.1 would send.
    const status = await new Promise<number | undefined>((resolve, reject) => request(view.url, { headers: { host: 'evil.example' } }, (res) => resolve(res.resume().statusCode)).on('error', reject).end());
    assert.equal(status, 403, 'a rebound name is refused on loopback');
  });

  it('the runs list shows runs from two suites, filters by suite and sorts by accuracy', async () => {
    const all = await (await get('/')).text();
    assert.match(all, /<td>router<\/td>/);
    assert.match(all, /<td>t<\/td>/);
    const only = await (await get('/?suite=router')).text();
    assert.doesNotMatch(only, /<td>t<\/td>/);
    const sorted = await (await get('/?suite=t&sort=accuracy')).text();
    const keys = [...sorted.matchAll(/data-key="(\w+)"/g)].map((m) => m[1]);
    // echo (h2, 50 %) and the files copied from it above mock (h3, 0 %).
    assert.ok(keys.indexOf('h2') < keys.indexOf('h3'), keys.join(','));
    // The model is the receipt's (the rate sweep's openai runs name model m; echo and mock name none).
    const byModel = await (await get('/?model=m')).text();
    assert.match(byModel, /<td>m<\/td>/);
    assert.doesNotMatch(byModel, /data-key="h2"/);
  });

  it('a transcript shows the prompt: read back from the suite, stored in the line, or said to be unstored; an answer is text', async () => {
    // A bundled suite's run keeps no prompt text (header prompts: index): it is read back from the suite.
    const indexed = await (await get('/cases/h1')).text();
    assert.match(indexed, /<h4>prompt<\/h4><pre class="prompt">[^<]+<\/pre>/);
    assert.doesNotMatch(indexed, /prompt not shown/);
    const run = await (await get('/cases/h2')).text();
    assert.match(run, /<h4>prompt<\/h4><pre class="prompt">4<\/pre>/);
    assert.match(run, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(run, /<script>alert/);
    const stored = await (await get('/cases/f0?q=c1')).text();
    assert.match(stored, /system: be brief\s+user: stored question: two plus two\?/);
    assert.match(await (await get('/cases/f1')).text(), /prompts not stored \(--no-store-prompts\)/);
    const wrong = await (await get('/cases/h3?outcome=correct')).text();
    assert.match(wrong, /0 scored case\(s\) match/);
  });

  it("a code run's datapoints show the solver's diff", async () => {
    const page = await (await get('/cases/f2')).text();
    assert.match(page, /<h4>diff<\/h4><pre class="diff">diff --git /);
    assert.match(page, /the solver changed nothing/);
  });

  it('compare shows the flipped case', async () => {
    const page = await (await get('/compare?k=h2&k=h3')).text();
    assert.match(page, /data-case="c1"[^]*broke: correct → wrong/);
    assert.match(page, /1 broke · 1 unchanged/);
  });

  it('a sweep folder and a rate sweep each have their page: the sweep table with its arms, the rate curves', async () => {
    const list = await (await get('/')).text();
    assert.match(list, /href="\/run\/s0">sw \(sweep /);
    const sweep = await (await get('/run/s0')).text();
    assert.match(sweep, /<table class="sweep-arms">/);
    assert.match(sweep, /data-arm="small"/);
    const rate = await (await get('/run/s1')).text();
    assert.match(rate, /<section id="rate-sweep">/);
    assert.match(rate, /data-chart="rate-latency"/);
  });

  const pages = ['/', '/run/h1', '/report?k=h2&k=h3', '/cases/h2', '/cases/f0', '/compare?k=h2&k=h3', '/trends', '/run/f2', '/cases/f2', '/run/s0', '/run/s1'];
  for (const path of pages) {
    for (const width of [1280, 800]) {
      it(`${path} at ${width} px in Chromium: no console error, no request off 127.0.0.1, no overflow`, { skip: browserSkip }, async () => {
        const page = await browser!.newPage({ viewport: { width, height: 900 } });
        const problems: string[] = [];
        const off: string[] = [];
        page.on('console', (m) => (m.type() === 'error' || m.type() === 'warning') && problems.push(`${m.type()}: ${m.text()}`));
        page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
        page.on('dialog', (d) => problems.push(`dialog: ${d.message()}`));
        page.on('request', (r) => !r.url().startsWith(view.url) && !r.url().startsWith('data:') && off.push(r.url()));
        const r = await page.goto(new URL(path, view.url).href);
        assert.equal(r?.status(), 200);
        if (/^\/(run|report|trends)/.test(path)) await page.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
        if (path === '/cases/h2') assert.match((await page.textContent('details[data-case="c2"]')) ?? '', /<script>alert\(1\)<\/script>/);
        const o = await overflow(page);
        assert.ok(o.ok, `page wider than the window: ${JSON.stringify(o)}`);
        assert.deepEqual(problems, []);
        assert.deepEqual(off, []);
        await page.close();
      });
    }
  }
});

describe('joulebench view: binding and the token', () => {
  it('--host 0.0.0.0 without --token is refused with one line, exit 2', async () => {
    const r = await jb(['view', '--no-open', '--host', '0.0.0.0']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^joulebench: --host 0\.0\.0\.0: serving beyond this machine needs --token/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    const unset = await jb(['view', '--no-open', '--host', '0.0.0.0', '--token', 'env:JB_VIEW_UNSET_TOKEN']);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /^joulebench: --token env:JB_VIEW_UNSET_TOKEN: that environment variable is not set/);
  });

  it('with --token every request needs it: 401 without; Bearer, or ?token= once (then an HttpOnly SameSite=Strict cookie)', async () => {
    const { child, url } = await startView(['--host', '127.0.0.1', '--token', 'sesame-1234']);
    try {
      for (const path of ['/', '/trends', '/assets/view.js', '/run/h1']) assert.equal((await fetch(new URL(path, url))).status, 401, path);
      assert.equal((await fetch(new URL('/?token=wrong-token', url))).status, 401);
      assert.equal((await fetch(url, { headers: { authorization: 'Bearer sesame-1234' } })).status, 200);
      const first = await fetch(new URL('/trends?token=sesame-1234', url), { redirect: 'manual' });
      assert.equal(first.status, 302);
      assert.equal(first.headers.get('location'), '/trends');
      const cookie = first.headers.get('set-cookie') ?? '';
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.equal((await fetch(new URL('/trends', url), { headers: { cookie: cookie.split(';')[0]! } })).status, 200);
    } finally {
      await stopView(child);
    }
    // env:NAME: the token is read from the environment, never from the command line.
    const fromEnv = await startView(['--token', 'env:JB_VIEW_TOKEN']);
    try {
      assert.equal((await fetch(fromEnv.url)).status, 401);
      assert.equal((await fetch(new URL('/?token=env:JB_VIEW_TOKEN', fromEnv.url))).status, 401);
      assert.equal((await fetch(fromEnv.url, { headers: { authorization: 'Bearer from-the-environment' } })).status, 200);
    } finally {
      await stopView(fromEnv.child);
    }
  });
});
