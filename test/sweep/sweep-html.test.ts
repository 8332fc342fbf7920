import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, it } from 'node:test';
import { chromium } from 'playwright-core';
import { cli } from '../helpers/cli.js';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'jb-sweep-html-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('report SWEEP_DIR --html: the arms with intervals, frontier marks, verdicts, and error bars drawn in Chromium', { skip: !existsSync(CHROMIUM) && process.env.JOULEBENCH_SKIP_BROWSER ? 'no chromium' : false }, async () => {
  const plan = join(dir, 'plan.yaml');
  writeFileSync(
    plan,
    `name: html
suites: [router]
baseline: ref
arms:
  - { name: ref, kind: cascade, meter: model }
  - { name: small-cache, kind: cascade, meter: model, cache_capacity: 1 }
  - { name: e, kind: cascade, meter: model, matrix: { neural.energy_j: [20, 55] } }
`,
  );
  const out = join(dir, 'sw');
  const r = await cli(['sweep', plan, '--out-dir', out, '--no-idle', '--no-history', '--bootstrap', '300', '-q']);
  assert.equal(r.code, 0, r.stderr);
  const html = join(dir, 'sweep.html');
  const rep = await cli(['report', out, '--html', html]);
  assert.equal(rep.code, 0, rep.stderr);
  // -o with an .html name draws the same page, the sweep's comparison included.
  const viaOut = join(dir, 'sweep-out.html');
  const rep2 = await cli(['report', out, '-o', viaOut]);
  assert.equal(rep2.code, 0, rep2.stderr);
  assert.match(readFileSync(viaOut, 'utf8'), /<table class="sweep-arms">/);
  const text = await cli(['report', out]);
  assert.match(text.stdout, /joulebench sweep html/);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(html).href);
    await page.waitForSelector('#chart-frontier svg, #chart-frontier canvas', { timeout: 20_000 });
    assert.deepEqual(errors, []);
    const arms = await page.$$eval('table.sweep-arms tbody tr', (rows) => rows.map((r) => r.getAttribute('data-arm')));
    assert.deepEqual(arms, ['ref', 'small-cache', 'e-neural.energy_j=20', 'e-neural.energy_j=55']);
    const ci = await page.$$eval('table.sweep-arms .ci', (els) => els.map((e) => e.textContent ?? ''));
    // Figures the same for every case ($0.00, the modelled latency) have degenerate intervals, never "95 % [v, v]".
    assert.ok(ci.length >= 8 && ci.every((t) => /^95 % \[/.test(t) || t === 'degenerate (identical values)'), ci.join(' | '));
    assert.ok(ci.filter((t) => /^95 % \[/.test(t)).length >= 8, ci.join(' | '));
    const verdicts = await page.$$eval('table.verdicts td.verdict', (els) => els.map((e) => e.textContent));
    assert.ok(verdicts.includes('better') && verdicts.includes('worse'), verdicts.join(', '));
    // $/correct beside J/correct, each arm with its change and verdict.
    const heads = await page.$$eval('table.verdicts th', (els) => els.map((e) => e.textContent));
    assert.ok(heads.includes('$/correct Δ'), heads.join(', '));
    const usd = await page.$$eval('table.verdicts td[data-k="usd_per_correct_pct"]', (els) => els.map((e) => e.textContent));
    assert.equal(usd.length, 3);
    // The headline table shows each run's intervals too.
    const head = await page.$$eval('#headline .ci[data-ci="accuracy_pct"]', (els) => els.map((e) => e.textContent ?? ''));
    assert.equal(head.length, 4);
    assert.ok(head.every((t) => /^95 % \[/.test(t)), head.join(' | '));
    const body = await page.textContent('body');
    assert.match(body ?? '', /frontier/);
    // Every arm's cases are on the page, read from its results file (30 router cases each).
    const caseRuns = await page.$$eval('table.cases tbody tr', (rows) => rows.map((r) => r.textContent ?? ''));
    assert.equal(caseRuns.length, 4 * 30, `${caseRuns.length} case rows`);
    // The error bars are a series of their own on the frontier chart.
    const legend = await page.textContent('#chart-frontier');
    assert.match(legend ?? '', /95 % intervals/);
  } finally {
    await browser.close();
  }
});
