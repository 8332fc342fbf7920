import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer, type SeenRequest } from '../helpers/fake-openai.js';
import { writeMtBench } from './mt-bench-data.js';

const CHROMIUM = '/usr/bin/chromium';
const servers: FakeServer[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** Two arms; the judge rates arm "big" 9 and arm "small" 4, except math, which both get 6. */
describe('MT-Bench in the Markdown and HTML reports', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-mtb-report-'));
  const files = writeMtBench(dir);
  const reports: string[] = [];
  let mdOut = '';

  before(async () => {
    const sut = await startFakeOpenAI((req: SeenRequest) => ({ kind: 'plain', text: `${String(req.body.model)} answer ${(req.body.messages as unknown[]).length}`, usage: { prompt_tokens: 10, completion_tokens: 5 } }));
    const judge = await startFakeOpenAI((req: SeenRequest) => {
      const user = (req.body.messages as { content: string }[]).at(-1)!.content;
      const rating = /17 times 3/.test(user) ? 6 : /big answer/.test(user) ? 9 : 4;
      return { kind: 'plain', text: `[[${rating}]]`, usage: { prompt_tokens: 40, completion_tokens: 2 } };
    });
    servers.push(sut, judge);
    const cfg = join(dir, 'judge.yaml');
    writeFileSync(cfg, `prices:\n  input_usd_per_mtok: 3\n  output_usd_per_mtok: 3\njudge:\n  kind: openai\n  endpoint: ${judge.url}\n  model: j\n  cache: j.jsonl\n  prices:\n    input_usd_per_mtok: 1\n    output_usd_per_mtok: 1\n`);
    for (const model of ['big', 'small']) {
      const out = join(dir, `${model}.json`);
      const r = await cli([
        'run', '--suite', 'mt-bench', '--data', files.questions, '--target', 'openai', '--endpoint', sut.url, '--model', model,
        '--config', cfg, '--meter', 'estimate', '--judge-meter', 'estimate', '--no-idle', '--no-history', '--out', out, '-q',
      ], { env: { JOULEBENCH_ACTIVE_WATTS: '3' } });
      assert.equal(r.code, 0, r.stderr);
      reports.push(out);
    }
    const md = await cli(['report', reports[0]!, join(dir, 'small.results.jsonl'), '--md']);
    assert.equal(md.code, 0, md.stderr);
    mdOut = md.stdout;
  });

  test('Markdown: MT-Bench score, J per point per category with a bar, the judge apart with its share', () => {
    assert.match(mdOut, /#### MT-Bench \(LLM judge\)/);
    assert.match(mdOut, /\| MT-Bench score \| 8\.63 \|/, 'big: seven categories at 9, math at 6');
    assert.match(mdOut, /\| writing \| 1\/1 \| 9\.00 \| `█████████░` \|/);
    assert.match(mdOut, /\| math \| 1\/1 \| 6\.00 \| `██████░░░░` \|/);
    assert.match(mdOut, /\| judge cost \| \$[0-9.e-]+ \| [0-9.]+ % of all dollars; apart from the totals above \|/);
    assert.match(mdOut, /\| judge energy \| [0-9.]+ [mµk]?J `estimate` \| [0-9.]+ % of all energy; apart from the totals above \|/);
    // The results file of the second arm carries its judge line, so its block is rebuilt from it.
    assert.match(mdOut, /\| MT-Bench score \| 4\.25 \|/, 'small: seven at 4, math at 6');
  });

  test('HTML in Chromium: a per-category bar chart with a series per arm, and the judge share table', { skip: !existsSync(CHROMIUM) && process.env.JOULEBENCH_SKIP_BROWSER ? 'no chromium' : false }, async () => {
    const html = join(dir, 'r.html');
    const r = await cli(['report', ...reports, '--html', html]);
    assert.equal(r.code, 0, r.stderr);
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      await page.goto(pathToFileURL(html).href);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
      assert.deepEqual(problems, []);
      const chart = await page.$eval('#chart-mt-bench', (el) => ({ rendered: el.getAttribute('data-rendered'), text: el.querySelector('svg')?.textContent ?? '', bars: el.querySelectorAll('svg path').length }));
      assert.equal(chart.rendered, '1');
      for (const s of ['writing', 'math', 'humanities', 'big', 'small']) assert.match(chart.text, new RegExp(s));
      assert.ok(chart.bars >= 16, `${chart.bars} shapes: 8 categories × 2 arms`);
      const table = await page.$eval('#mt-bench table', (el) => el.textContent ?? '');
      assert.match(table, /of all energy/);
      assert.match(table, /of all dollars/);
      assert.match(table, /judge openai:j · single/);
    } finally {
      await browser?.close();
    }
    assert.match(readFileSync(html, 'utf8'), /id="mt-bench"/);
  });
});

test('the MT-Bench section escapes what came from files (category names, labels, judge model)', async () => {
  const { mtBenchSection } = await import('../../src/report/html/mt-bench-section.js');
  const evil = '<img src=x onerror=alert(1)>';
  const slice = { case_count: 1, judged_count: 1, mt_bench_score: 5, points: 5, total_joules: 1, joules_per_mt_bench_point: 0.2 };
  const report = {
    mt_bench_score: 5, mt_bench_judged_count: 1, mt_bench_unscored_count: 0, mt_bench_points: 5, joules_per_mt_bench_point: 0.2, judge_pass: 7,
    mt_bench_by_category: { [evil]: slice },
    judge: { model: evil, mode: 'single', prompt_hash: 'sha256:' + evil, pass: 7, temperature: 0, judgements: 1, cached: 0, requests: 1, error_count: 0 },
    judge_joules: null, judge_energy_source: 'none', judge_usd: null, judge_prompt_tokens: null, judge_completion_tokens: null, judge_share_joules: null, judge_share_usd: null,
  };
  const html = mtBenchSection({ runs: [{ label: evil, origin: 'x', report, receipt: null, has_cases: false, case_latency_ms: null }] } as never);
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
});
