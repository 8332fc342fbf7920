import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { prettyJson } from '../../src/core/canonical.js';
import type { Target } from '../../src/core/types.js';
import type { Meter } from '../../src/meters/meter.js';
import { writeOutputFile } from '../../src/cli/output-file.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { run } from '../../src/runner/run.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { buildHtmlReport } from '../../src/report/html/index.js';
import { loadRuns } from '../../src/report/load-inputs.js';
import { jb } from '../cli/helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'jb-html-'));
// The screenshot is kept for a person to look at; the rest is removed.
const shotDir = mkdtempSync(join(tmpdir(), 'jb-html-shot-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A target with everything the page can show: TTFT, cost, a measured source, and readings below the floor. */
function fakeEndpoint(): Target {
  let n = 0;
  return {
    id: 'fake:endpoint',
    kind: 'fake',
    describe: () => ({ kind: 'fake' }),
    async answer(req) {
      n++;
      const right = n % 4 !== 0;
      return {
        text: right ? (req.case.expected ?? 'ok') : 'no idea',
        ttft_ms: 10 + (n % 7),
        cost_usd: 0.0002,
        usage: { prompt_tokens: 20, completion_tokens: 5 },
        energy: { joules: 0.25 + (n % 5) / 10, source: 'rapl', below_floor: n % 6 === 0 },
      };
    },
  };
}

/**
 * A meter that prefers the target's own (rapl-labelled) readings per case and measures the whole suite
 * as one 5 J window: with readings below the floor, the report's headline comes from that window
 * (report format 1.1, `energy_basis: suite_window`), so the endpoint still has a J/correct to plot.
 */
function suiteWindowMeter(): Meter {
  const reading = { joules: 5, source: 'rapl' as const, by_domain: {}, window_ms: 1000, below_floor: false };
  return { id: 'rapl', source: 'rapl', floor_ms: 0, prefersTargetEnergy: true, probe: async () => ({ available: true }), start: async () => ({ stop: async () => reading }), describe: () => ({}) };
}

async function saveRun(name: string, target: Target, warmup: number, meter?: Meter): Promise<string> {
  const suite = loadSuite('router');
  const sink = new JsonlResultsFile(join(dir, `${name}.results.jsonl`));
  const out = await run({ suite, target, warmup, repeats: 1, sink, ...(meter ? { meter, idle_ms: 0 } : {}) });
  sink.close();
  writeOutputFile(join(dir, `${name}.json`), prettyJson(out.report), 'output');
  writeOutputFile(join(dir, `${name}.receipt.json`), prettyJson({ started_utc: '2026-01-01T00:00:00.000Z', finished_utc: '2026-01-01T00:00:01.000Z', joulebench_version: 't', node_version: process.version, host: { hostname: 'testhost' } }), 'output');
  return join(dir, `${name}.json`);
}

describe('the HTML report in headless Chromium', { skip: !existsSync(CHROMIUM) && process.env.JOULEBENCH_SKIP_BROWSER ? 'JOULEBENCH_SKIP_BROWSER set and no chromium' : false }, () => {
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const requests: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
    const files = [await saveRun('warm', createReferenceCascade(), 1), await saveRun('cold', createReferenceCascade(), 0), await saveRun('endpoint', fakeEndpoint(), 0, suiteWindowMeter())];
    const html = join(dir, 'report.html');
    const r = jb(['report', ...files, '--html', html], { home: join(dir, 'home') });
    assert.equal(r.code, 0, r.stderr);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('request', (req) => {
      if (!req.url().startsWith('file:')) requests.push(req.url());
    });
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
  });
  after(async () => {
    await browser?.close();
  });

  it('is one self-contained file: no request leaves it, no console error', () => {
    const text = readFileSync(join(dir, 'report.html'), 'utf8');
    assert.doesNotMatch(text, /<script[^>]+src=|<link[^>]+href=/i);
    assert.deepEqual(requests, []);
    assert.deepEqual(problems, []);
  });

  it('renders every chart (non-empty SVG)', async () => {
    const charts = await page.$$eval('.chart', (els) =>
      els.map((el) => ({ id: el.id, rendered: el.getAttribute('data-rendered'), shapes: el.querySelectorAll('svg path, svg rect, svg circle').length, w: el.getBoundingClientRect().width })),
    );
    // warm and cold are modelled (the cascade's cost model); endpoint has no J/correct here: the one
    // frontier chart is the modelled one, its axis says so.
    assert.deepEqual(charts.map((c) => c.id).sort(), ['chart-cost', 'chart-frontier', 'chart-latency', 'chart-stage-energy', 'chart-stages']);
    for (const c of charts) {
      assert.equal(c.rendered, '1', `${c.id} not rendered`);
      assert.ok(c.shapes > 5, `${c.id} has ${c.shapes} shapes`);
      assert.ok(c.w > 100, `${c.id} has no width`);
    }
    // The frontier chart draws a point per arm with a label: the three run labels are in its SVG.
    const labels = await page.$eval('#chart-frontier svg', (svg) => svg.textContent ?? '');
    for (const l of ['warm', 'cold']) assert.match(labels, new RegExp(l));
    assert.match(labels, /modelled J \/ correct \[model\]/);
  });

  it('shows headline numbers with their energy source labels and below-floor flags', async () => {
    const headline = await page.$eval('#headline', (el) => el.textContent ?? '');
    assert.match(headline, /\[model\]/);
    assert.match(headline, /\[rapl\]/);
    assert.match(headline, /⚠ \d+ below floor/);
    assert.match(headline, /total \$0\.00600/, "30 cases × $0.0002");
    const receipt = await page.$eval('#receipt', (el) => el.textContent ?? '');
    assert.match(receipt, /sha256:[0-9a-f]{64}/);
    assert.match(receipt, /2026-01-01T00:00:00\.000Z/);
    assert.match(receipt, /testhost/);
  });

  it('filters the case table by search text, outcome and run', async () => {
    const rows = (): Promise<string[]> => page.$$eval('#case-rows tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    const all = await rows();
    assert.equal(all.length, 90);
    await page.fill('#case-search', 'rt-kv-3');
    const found = await rows();
    assert.equal(found.length, 3);
    for (const r of found) assert.match(r, /rt-kv-3/);
    await page.fill('#case-search', '');
    await page.selectOption('#case-filter', 'incorrect');
    const wrong = await page.$$eval('#case-rows tr td.outcome', (tds) => tds.map((td) => td.textContent));
    assert.ok(wrong.length > 0 && wrong.every((t) => t === 'incorrect'), `incorrect filter: ${wrong.join(',')}`);
    await page.selectOption('#case-filter', 'below-floor');
    const floor = await rows();
    assert.ok(floor.length > 0 && floor.every((r) => /below floor/.test(r) && /\[rapl\]/.test(r)));
    await page.selectOption('#case-filter', 'all');
    await page.selectOption('#case-run', 'cold');
    assert.equal((await rows()).length, 30);
    assert.match((await page.textContent('#case-count')) ?? '', /^30 of 90 cases/);
    await page.selectOption('#case-run', 'all');
  });

  it('renders a single run from the library API too: charts drawn (the reference cascade bills a known $0), no error', async () => {
    const [one] = loadRuns([join(dir, 'warm.json')], null);
    const html = join(dir, 'one.html');
    writeOutputFile(html, buildHtmlReport([one!]), 'output');
    const p2 = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    const errs: string[] = [];
    p2.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
    p2.on('pageerror', (e) => errs.push(e.message));
    await p2.goto(pathToFileURL(html).href);
    await p2.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
    assert.deepEqual(errs, []);
    const ids = await p2.$$eval('.chart[data-rendered="1"]', (els) => els.map((e) => e.id).sort());
    // One run is one dot: no frontier chart, a note instead.
    // A known $0 everywhere is no chart either: the note says why.
    assert.deepEqual(ids, ['chart-latency', 'chart-stage-energy', 'chart-stages']);
    assert.match((await p2.textContent('#latency')) ?? '', /every run that reported a cost reported \$0\.00 \(a known zero/);
    assert.match((await p2.textContent('#frontier')) ?? '', /only one arm \(warm\) has figures, so there is nothing to trade off against/);
    assert.doesNotMatch((await p2.textContent('#latency')) ?? '', /No run reported a cost/);
    assert.equal(await p2.$$eval('#case-rows tr', (trs) => trs.length), 30);
    await p2.close();
    // A run whose cost is unknown says n/a rather than drawing $0.
    const unknown = buildHtmlReport([{ ...one!, report: { ...one!.report, total_usd: null, usd_per_correct: null } }]);
    assert.match(unknown, /No run reported a cost \(no usage or no price\): cost is n\/a, not \$0/);
    assert.doesNotMatch(unknown, /id="chart-cost"/);
  });

  it('takes a screenshot', async () => {
    const path = join(shotDir, 'report.png');
    await page.screenshot({ path, fullPage: true });
    assert.ok(readFileSync(path).length > 20_000);
    process.stderr.write(`# screenshot: ${path}\n`);
  });
});
