import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchChromium, openReport, overflow } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

/**
 * The energy section of the HTML report: a traced RAPL run (two packages, --pue) and a code results file
 * carrying a hand-written trace with a gap and an invalid window, drawn at 1280 and 800 px.
 */
describe('HTML report: power trace, validity and boundary layers in Chromium', { skip: browserSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-html-energy-'));
  const tree = writePowercapTree([
    { entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 },
    { entry: 'intel-rapl:1', name: 'package-1', energy_uj: 0 },
  ]);
  const html = join(dir, 'page.html');
  const env = { env: { JOULEBENCH_HOME: join(dir, 'home') } };
  let browser: Browser;

  before(async () => {
    // About 50 W and 25 W while the run goes on.
    let uj = 0;
    const writer = setInterval(() => {
      uj += 100_000;
      setEnergy(tree.root, 'intel-rapl:0', uj);
      setEnergy(tree.root, 'intel-rapl:1', uj / 2);
    }, 2);
    const code = join(dir, 'agents.json');
    try {
      const [r, c] = await Promise.all([
        cli(['run', '--suite', 'router', '--limit', '3', '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '300', '--pue', '1.5', '--power-trace', join(dir, 'p.csv'), '-q', '--no-history', '-o', join(dir, 'traced.json')], env),
        cli(['code', '--solvers', 'reference', '--tasks', 'off-by-one', '--sandbox', 'none', '--meter', 'estimate', '--out', code, '--quiet', '--no-history'], env),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(c.code, 0, c.stderr);
    } finally {
      clearInterval(writer);
    }
    // A code results file as it carries its trace: domains gpu-0 and package-0, which missed a read (a gap).
    const doc = JSON.parse(readFileSync(code, 'utf8')) as Record<string, unknown>;
    doc.power_trace = {
      interval_ms: 100,
      domains: ['gpu-0', 'package-0'],
      rows: [
        ['2026-01-01T00:00:00.100Z', 'idle', 100, 60, 20],
        ['2026-01-01T00:00:00.200Z', 'idle', 100, 61, 21],
        ['2026-01-01T00:00:00.400Z', 'warmup', 200, 250, 40],
        ['2026-01-01T00:00:00.700Z', 'scored', 300, 300, null],
        ['2026-01-01T00:00:01.000Z', 'scored', 300, 310, 45],
      ],
    };
    doc.suite_window_validity = { valid: false, reasons: ['largest gap 900 ms exceeds 4 poll intervals'], meter: 'nvml', devices: ['gpu-0'], samples: 3, coverage_pct: 40, max_gap_ms: 900, wraps: 0, failed_reads: 2 };
    writeFileSync(code, JSON.stringify(doc));
    const rep = await cli(['report', join(dir, 'traced.json'), code, '--html', html], env);
    assert.equal(rep.code, 0, rep.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    tree.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const width of [1280, 800]) {
    it(`at ${width} px: a line per domain, phases shaded with a legend, the validity and layer tables; no error, no request, no overflow`, async () => {
      const { page, problems, requests } = await openReport(browser, html, width);
      try {
        const charts = (await page.evaluate(`Array.from(document.querySelectorAll('[data-chart="power"]')).map((el) => ({
          rendered: el.getAttribute('data-rendered'), width: el.getBoundingClientRect().width, text: el.textContent,
          lines: el.querySelectorAll('path[fill="none"]').length,
          shaded: Array.from(el.querySelectorAll('path')).filter((p) => /^rgba?\\(/.test(p.getAttribute('fill') || '') && Number(p.getAttribute('fill-opacity') || 1) < 0.5).length }))`)) as {
          rendered: string | null; width: number; text: string; lines: number; shaded: number;
        }[];
        assert.equal(charts.length, 2, 'one chart for the run, one for the code results');
        const [run, code] = charts as [(typeof charts)[0], (typeof charts)[0]];
        for (const c of charts) {
          assert.equal(c.rendered, '1');
          assert.ok(c.width > 300 && c.width <= width, `chart ${c.width} px wide at ${width}`);
          assert.ok(c.lines >= 2, `a line per domain: ${c.lines} unfilled paths`);
        }
        for (const name of ['package-0', 'package-1', 'phase: idle', 'phase: scored']) assert.ok(run.text.includes(name), `legend of the run has ${name}: ${run.text}`);
        for (const name of ['gpu-0', 'package-0', 'phase: idle', 'phase: warmup', 'phase: scored']) assert.ok(code.text.includes(name), `legend of the code file has ${name}: ${code.text}`);
        assert.ok(code.shaded >= 3, `three phase spans shaded: ${code.shaded}`);
        const tables = (await page.evaluate(`const cells = (tr) => Array.from(tr.cells).map((c) => c.innerText.replace(/\\s+/g, ' ').trim()).join(' | ');
        ({
          valid: Array.from(document.querySelectorAll('table.validity tr[data-valid]')).map((tr) => tr.getAttribute('data-valid') + ': ' + cells(tr)),
          layers: Array.from(document.querySelectorAll('table.layers tr[data-layer]')).map(cells),
        })`)) as { valid: string[]; layers: string[] };
        assert.equal(tables.valid.length, 2, tables.valid.join('\n'));
        assert.match(tables.valid[0]!, /^true: suite window \| valid \| rapl package-0, package-1 \| \d+ \| /);
        assert.match(tables.valid[1]!, /^false: suite window \| invalid largest gap 900 ms exceeds 4 poll intervals \| nvml gpu-0 \| 3 \| 40\.0 % \| 900 ms \| 0 \| 2$/);
        assert.ok(tables.layers.some((l) => /^host \| measured \| \S+ [kmµ]?J \| \S+ [kmµ]?J \| package-0, package-1/.test(l)), tables.layers.join('\n'));
        assert.ok(tables.layers.some((l) => /^facility \| modelled \| .*PUE 1\.5/.test(l)), tables.layers.join('\n'));
        assert.deepEqual(problems, []);
        assert.deepEqual(requests, []);
        const o = await overflow(page);
        assert.ok(o.ok, `page wider than the window: ${JSON.stringify(o)}`);
        if (process.env.JB_SHOT) await page.locator('#energy').screenshot({ path: join(process.env.JB_SHOT, `energy-${width}.png`) });
      } finally {
        await page.close();
      }
    });
  }
});
