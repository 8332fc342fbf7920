import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchChromium, openReport } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

/**
 * Pages that read at a glance, in headless Chromium at 1280 and 800 px: runs of one suite labelled by
 * model or path, $/correct on its own axis, wide tables with a visible scroll cue, each sweep arm's
 * receipt, and a code page whose wall p95 is never below its median.
 */
describe('HTML pages read at a glance (headless Chromium)', { skip: browserSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-html-glance-'));
  const p = (...f: string[]): string => join(dir, ...f);
  const jb = (args: string[]) => cli(args, { cwd: dir, env: { JOULEBENCH_HOME: p('home') } });
  let server: FakeServer;
  let browser: Browser;

  before(async () => {
    server = await startFakeOpenAI((req) => {
      const prompt = String((req.body.messages as { content: string }[]).at(-1)?.content ?? '');
      return { kind: 'plain', text: prompt.split(' ')[1] ?? '?', usage: { prompt_tokens: 10, completion_tokens: 2 } };
    });
    writeFileSync(p('q.jsonl'), ['alpha', 'bravo', 'charlie'].map((w, i) => JSON.stringify({ id: `c${i}`, prompt: `say ${w}`, expected: w })).join('\n') + '\n');
    // The dear model costs 1000x the cheap one per token.
    writeFileSync(p('cheap.yaml'), 'prices:\n  input_usd_per_mtok: 1\n  output_usd_per_mtok: 4\n');
    writeFileSync(p('dear.yaml'), 'prices:\n  input_usd_per_mtok: 1000\n  output_usd_per_mtok: 4000\n');
    for (const d of ['a', 'b', 'c']) mkdirSync(p(d));
    const run = (out: string, model: string, cfg: string) =>
      jb(['run', '-q', '--no-history', '-s', p('q.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', model, '-c', p(cfg), '--meter', 'model', '-o', p(out)]);
    writeFileSync(p('plan.yaml'), 'name: glance\nsuites: [router]\nbaseline: ref\narms:\n  - { name: ref, kind: cascade, meter: model }\n  - { name: small-cache, kind: cascade, meter: model, cache_capacity: 1 }\n');
    const runs = await Promise.all([
      run('a/q.json', 'cheap', 'cheap.yaml'),
      run('b/q.json', 'dear', 'dear.yaml'),
      run('c/q.json', 'cheap', 'cheap.yaml'),
      jb(['code', '-q', '--no-history', '--solvers', 'reference,noop', '--limit', '2', '--rollouts', '2', '--sandbox', 'none', '-o', p('agents.json')]),
      jb(['sweep', p('plan.yaml'), '--out-dir', p('sw'), '--no-idle', '--no-history', '--bootstrap', '200', '-q']),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const pages = await Promise.all([
      jb(['report', p('a/q.json'), p('b/q.json'), p('c/q.json'), '-o', p('suite.html')]),
      jb(['report', p('agents.json'), '-o', p('code.html')]),
      jb(['report', p('sw'), '-o', p('sweep.html')]),
    ]);
    for (const r of pages) assert.equal(r.code, 0, r.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (!process.env.JOULEBENCH_KEEP_SCREENSHOTS) rmSync(dir, { recursive: true, force: true });
  });

  /** Opens a page, checks it is clean (no overflow, console error or request), hands it to `check`. */
  async function clean(file: string, width: number, check: (page: Page) => Promise<void>): Promise<void> {
    const { page, problems, requests } = await openReport(browser, p(file), width);
    try {
      const m = (await page.evaluate('({ doc: document.documentElement.scrollWidth, inner: window.innerWidth })')) as { doc: number; inner: number };
      assert.ok(m.doc <= m.inner, `page wider than the window: ${JSON.stringify(m)}`);
      await check(page);
      // Only taken to be kept: a full-page screenshot costs more than the checks.
      if (process.env.JOULEBENCH_KEEP_SCREENSHOTS) await page.screenshot({ path: p(`${file}-${width}.png`), fullPage: true });
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, []);
    } finally {
      await page.close();
    }
  }

  /** The headline table's scroll box and the cue above it. */
  const scrollState = (page: Page, section: string) =>
    page.evaluate(`(() => {
      const box = document.querySelector('${section} div.scroll');
      const cue = box.previousElementSibling;
      return { box: box.clientWidth, table: box.querySelector('table').scrollWidth, cue: cue.classList.contains('scroll-cue'), visible: !cue.hidden && cue.offsetHeight > 0, text: cue.textContent };
    })()`) as Promise<{ box: number; table: number; cue: boolean; visible: boolean; text: string }>;

  for (const width of [1280, 800]) {
    it(`suite page at ${width} px: runs labelled by model or path, $/correct on its own axis, scroll cues`, async () => {
      await clean('suite.html', width, async (page) => {
        const labels = await page.$$eval('#headline tbody tr > td:first-child', (tds) => tds.map((td) => td.firstChild?.textContent ?? ''));
        assert.equal(labels.length, 3);
        assert.ok(labels.every((l) => !/\(\d+\)/.test(l)), labels.join(' | '));
        assert.equal(new Set(labels).size, 3, labels.join(' | '));
        assert.match(labels[1]!, /^q · .*dear/, 'the one run of its model is labelled by the model');
        assert.ok(labels[0]!.endsWith(join('a', 'q.json')) && labels[2]!.endsWith(join('c', 'q.json')), `same model: labelled by path: ${labels.join(' | ')}`);
        const cost = (await page.evaluate(`(() => {
          const o = window.echarts.getInstanceByDom(document.getElementById('chart-cost')).getOption();
          return { axes: o.yAxis.map((a) => a.type + ' ' + a.name), on: o.series.map((s) => s.name + '@' + s.yAxisIndex) };
        })()`)) as { axes: string[]; on: string[] };
        assert.deepEqual(cost.on, ['$ / correct@0', 'total $@1']);
        assert.deepEqual(cost.axes, ['value $ / correct', 'value total $']);
        // Each bar carries its figure, so the cheap model's (1000x smaller) still reads.
        const text = (await page.textContent('#chart-cost')) ?? '';
        assert.ok(['$0.0000180', '$0.0180'].every((t) => text.includes(t)), text);
        const head = await scrollState(page, '#headline');
        const cases = await scrollState(page, '#cases');
        assert.ok(head.cue && cases.cue);
        if (width === 800) {
          assert.ok(head.box < head.table, `headline cut off at 800 px: ${JSON.stringify(head)}`);
          assert.ok(head.visible, 'a visible cue says the headline scrolls sideways');
          assert.match(head.text, /scroll the table sideways/);
          assert.equal(cases.visible, cases.box < cases.table, JSON.stringify(cases));
        } else {
          assert.ok(head.box >= head.table && !head.visible, `the headline fits 1280 px with no cue: ${JSON.stringify(head)}`);
        }
      });
    });

    it(`code page at ${width} px: the wall p95 is never below the median (two rollouts a task)`, async () => {
      await clean('code.html', width, async (page) => {
        const walls = await page.$$eval('table.code:not(.pass-at-k) > tbody > tr > td:nth-child(6)', (tds) => tds.map((td) => td.textContent ?? ''));
        assert.equal(walls.length, 2);
        const ms = (s: string): number => (/([\d.]+) s\b/.test(s) ? Number(/([\d.]+) s\b/.exec(s)![1]) * 1000 : Number(/([\d.]+) ms/.exec(s)?.[1] ?? NaN));
        for (const w of walls) {
          const [median, p95] = w.split(' / ').map(ms);
          assert.ok(!Number.isNaN(median!) && !Number.isNaN(p95!), w);
          assert.ok(p95! >= median!, `p95 below the median: ${w}`);
        }
      });
    });

    it(`sweep page at ${width} px: every arm shows its receipt`, async () => {
      await clean('sweep.html', width, async (page) => {
        const receipts = await page.$$eval('#receipt details', (ds) => ds.map((d) => ({ summary: d.querySelector('summary')?.textContent ?? '', cls: d.className, pre: d.querySelector('pre')?.textContent ?? '' })));
        assert.deepEqual(receipts.map((r) => r.summary), ['ref', 'small-cache']);
        for (const r of receipts) {
          assert.equal(r.cls, '', r.summary);
          assert.match(r.pre, /"format": "joulebench-receipt\/1"/, r.summary);
        }
      });
    });
  }
});
