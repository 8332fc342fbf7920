import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchChromium, openReport } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';

/**
 * Every page type (suite runs, coding agents, local inference, all of them mixed) at 1280 and 800 px:
 * nothing wider than the window, no console error, no request leaving the file; screenshots kept in
 * this test's temp folder while it runs.
 */
describe('each HTML page type at 1280 and 800 px in headless Chromium', { skip: browserSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-html-widths-'));
  const home = join(dir, 'home');
  const p = (f: string): string => join(dir, f);
  const jb = (args: string[]) => cli(args, { cwd: dir, env: { JOULEBENCH_HOME: home } });
  const fake = new FakeOllama({ models: { m1: { parameter_count: 1e6 } }, load_ms: 2, prefill_ms_per_token: 0.01, decode_tok_s: () => 25, reply: () => 'ok' });
  let browser: Browser;
  const pages: Record<string, string> = {};

  before(async () => {
    const url = await fake.start();
    writeFileSync(p('q.json'), JSON.stringify({ name: 'q', cases: [{ id: 'long-answer', prompt: 'a'.repeat(300), expected: 'x' }, { id: 'b', prompt: 'b', expected: 'b' }] }));
    const runs = await Promise.all([
      jb(['run', '-q', '--no-history', '-s', 'router', '-o', p('warm-cascade-with-a-long-name.json')]),
      jb(['run', '-q', '--no-history', '-s', 'router', '--warmup', '0', '-o', p('cold.json')]),
      jb(['code', '-q', '--no-history', '--solvers', 'reference,noop', '--limit', '2', '--sandbox', 'none', '-o', p('agents.json')]),
      jb(['infer', '-q', '--no-history', '--model', 'm1', '--base-url', url, '--threads', 'default,2', '--runs', '2', '--warmup', '0', '--cold', '1', '--num-predict', '3', '--gpu-snapshot-cmd', '', '--meter', 'none', '-o', p('local.json')]),
      jb(['run', '-q', '--no-history', '-s', p('q.json'), '-o', p('endpointless.json')]),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const specs: Record<string, string[]> = {
      suite: [p('warm-cascade-with-a-long-name.json'), p('cold.json'), p('endpointless.json')],
      code: [p('agents.json')],
      infer: [p('local.json')],
      mixed: [p('warm-cascade-with-a-long-name.json'), p('agents.json'), p('local.json')],
    };
    for (const kind of Object.keys(specs)) pages[kind] = p(`${kind}.html`);
    const reports = await Promise.all(Object.entries(specs).map(([kind, files]) => jb(['report', ...files, '-o', pages[kind]!])));
    for (const r of reports) assert.equal(r.code, 0, r.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await fake.stop();
    if (!process.env.JOULEBENCH_KEEP_SCREENSHOTS) rmSync(dir, { recursive: true, force: true });
  });

  for (const kind of ['suite', 'code', 'infer', 'mixed']) {
    for (const width of [1280, 800]) {
      it(`${kind} page at ${width} px: no horizontal overflow, no console error, no request`, async () => {
        const { page, problems, requests } = await openReport(browser, pages[kind]!, width);
        // A string, evaluated in the page (this file is type-checked without the DOM library).
        const m = (await page.evaluate(`(() => {
          const t = document.querySelector('#headline table');
          const s = document.querySelector('#headline');
          return {
            doc: document.documentElement.scrollWidth,
            body: document.body.scrollWidth,
            inner: window.innerWidth,
            headline: t && s ? { table: t.getBoundingClientRect().width, section: s.clientWidth } : null,
          };
        })()`)) as { doc: number; body: number; inner: number; headline: { table: number; section: number } | null };
        const shot = join(dir, `${kind}-${width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        process.stderr.write(`# screenshot: ${shot}\n`);
        assert.ok(m.doc <= m.inner && m.body <= m.inner, `page wider than the window: ${JSON.stringify(m)}`);
        if (width === 1280 && m.headline) assert.ok(m.headline.table <= m.headline.section, `headline table fits 1280 px: ${JSON.stringify(m.headline)}`);
        assert.deepEqual(problems, []);
        assert.deepEqual(requests, []);
        assert.ok(readFileSync(shot).length > 10_000);
        if (kind === 'code') {
          const grid = await page.$$eval('table.grid tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
          assert.equal(grid.length, 2, 'one row per task');
          assert.ok(grid.every((row) => /✓ resolved/.test(row) && /✗ not resolved/.test(row)), grid.join(' | '));
        }
        if (kind === 'suite' && width === 1280) {
          // No stage chart for a run of questions that is not a cascade is asserted elsewhere; here a case opens its detail.
          await page.click('#case-rows tr a.case-link');
          assert.match((await page.textContent('tr.case-detail')) ?? '', /expected[\s\S]*answer/);
        }
        await page.close();
      });
    }
  }
});
