import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkip, launchChromium, openReport } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

const POWER_W = 40;

interface CurvePoint {
  request_rate: number | 'inf';
  output_throughput: number | null;
  p99_ttft_ms: number | null;
  p99_tpot_ms: number | null;
  joules_per_output_token: number | null;
  energy_source: string;
}

/**
 * A rate sweep run from the command line against a streaming OpenAI-compatible server on 127.0.0.1,
 * metered through a powercap tree whose counter this test advances at a known power, then drawn by
 * `report SWEEP.json -o PAGE.html` (and `run … -o PAGE.html`) and opened in headless Chromium.
 */
describe('rate sweep charts in the HTML report (headless Chromium)', { skip: browserSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-rate-html-'));
  const p = (f: string): string => join(dir, f);
  const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }]);
  let server: FakeServer;
  let browser: Browser;
  let ticker: NodeJS.Timeout;
  let sweep: { rates: unknown[]; curve: CurvePoint[] };

  before(async () => {
    // The package counter advances as a POWER_W package would, written every 5 ms while the runs go on.
    const t0 = performance.now();
    ticker = setInterval(() => setEnergy(tree.root, 'intel-rapl:0', Math.round((performance.now() - t0) * POWER_W * 1000)), 5);
    server = await startFakeOpenAI((req) => {
      const prompt = String((req.body.messages as { content: string }[]).at(-1)?.content ?? '');
      const word = prompt.split(' ')[1] ?? '?';
      return { kind: 'stream', text: `${word} is the answer`, usage: { prompt_tokens: 6, completion_tokens: 6 }, chunkDelay_ms: 2 };
    });
    writeFileSync(p('suite.jsonl'), ['alpha', 'bravo', 'charlie'].map((w, i) => JSON.stringify({ id: `c${i}`, prompt: `say ${w}`, expected: w })).join('\n') + '\n');
    const base = ['run', '--suite', p('suite.jsonl'), '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--no-history', '--num-requests', '6', '--max-concurrency', '2', '--cooldown-s', '0', '-q'];
    const [metered, unmetered] = await Promise.all([
      cli([...base, '--meter', 'rapl', '--powercap-root', tree.root, '--idle-ms', '20', '--request-rate', '20,40,inf', '--slo', 'ttft_ms=5000', '-o', p('sweep.json')]),
      // No meter that reads energy (the openai target models none): the J/token chart gives way to a sentence.
      cli([...base, '--meter', 'model', '--idle-ms', '1', '--request-rate', '30,inf', '-o', p('direct.html')]),
    ]);
    assert.equal(metered.code, 0, metered.stderr);
    assert.equal(unmetered.code, 0, unmetered.stderr);
    sweep = JSON.parse(readFileSync(p('sweep.json'), 'utf8')) as typeof sweep;
    const reports = await Promise.all([cli(['report', p('sweep.json'), '-o', p('sweep.html')]), cli(['report', p('sweep.rate-20.json'), '-o', p('one.html')])]);
    for (const r of reports) assert.equal(r.code, 0, r.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    clearInterval(ticker);
    await browser?.close();
    await server?.close();
    tree.cleanup();
    if (!process.env.JOULEBENCH_KEEP_SCREENSHOTS) rmSync(dir, { recursive: true, force: true });
  });

  it('the sweep document names each rate\'s files relative to itself, and J/output token comes from the powercap tree', () => {
    assert.deepEqual(sweep.rates, [20, 40, 'inf']);
    const doc = JSON.parse(readFileSync(p('sweep.json'), 'utf8')) as { reports: string[]; results: string[] };
    assert.deepEqual(doc.reports, ['sweep.rate-20.json', 'sweep.rate-40.json', 'sweep.rate-inf.json']);
    assert.deepEqual(doc.results, ['sweep.rate-20.results.jsonl', 'sweep.rate-40.results.jsonl', 'sweep.rate-inf.results.jsonl']);
    // The per-rate report's headline energy is the run window's, and says so (it said `none`: no per-request readings).
    const one = JSON.parse(readFileSync(p('sweep.rate-20.json'), 'utf8')) as { energy_source: string; energy_basis: string; total_joules: number | null };
    assert.equal(one.energy_basis, 'suite_window');
    assert.equal(one.energy_source, 'rapl');
    assert.ok(typeof one.total_joules === 'number' && one.total_joules > 0);
    for (const pt of sweep.curve) {
      assert.equal(pt.energy_source, 'rapl');
      assert.ok(typeof pt.joules_per_output_token === 'number' && pt.joules_per_output_token > 0, JSON.stringify(pt));
    }
  });

  /** Opens a page and returns what the rate charts hold (series lengths, axis names, rendered text). */
  async function open(file: string, width: number): Promise<{ latency: { series: number[]; text: string }[]; energy: { series: number[]; yName: string; kind: string }[]; missing: Record<string, string[]>; values: (number | null)[][]; goodput: string[] }> {
    const { page, problems, requests } = await openReport(browser, file, width);
    try {
      // A string, evaluated in the page (this file is type-checked without the DOM library).
      const m = (await page.evaluate(`(() => {
        const opt = (el) => window.echarts.getInstanceByDom(el).getOption();
        const latency = [...document.querySelectorAll('[data-chart="rate-latency"]')].map((el) => ({
          series: opt(el).series.map((s) => s.data.length),
          text: [...el.querySelectorAll('svg text')].map((t) => t.textContent).join(' '),
        }));
        const energy = [...document.querySelectorAll('[data-chart="rate-energy"]')].map((el) => ({
          series: opt(el).series.map((s) => s.data.filter((d) => d !== null).length),
          values: opt(el).series[0].data.map((d) => (d === null ? null : d.value)),
          yName: opt(el).yAxis[0].name,
          kind: el.getAttribute('data-energy'),
        }));
        const goodput = [...document.querySelectorAll('[data-chart="rate-goodput"]')].map((el) => opt(el).series.map((s) => s.name + ':' + s.data.filter((d) => d !== null).length).join(','));
        const missing = {};
        document.querySelectorAll('[data-missing-chart]').forEach((el) => { (missing[el.getAttribute('data-missing-chart')] ||= []).push(el.textContent); });
        return { doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, inner: window.innerWidth, latency, goodput, energy, missing };
      })()`)) as { doc: number; body: number; inner: number; latency: { series: number[]; text: string }[]; goodput: string[]; energy: { series: number[]; values: (number | null)[]; yName: string; kind: string }[]; missing: Record<string, string[]> };
      const shot = join(dir, `${file.split('/').at(-1)!.replace(/\.html$/, '')}-${width}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      process.stderr.write(`# screenshot: ${shot}\n`);
      assert.ok(readFileSync(shot).length > 10_000);
      assert.ok(m.doc <= m.inner && m.body <= m.inner, `page wider than the window: ${JSON.stringify({ doc: m.doc, body: m.body, inner: m.inner })}`);
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, []);
      return { latency: m.latency, goodput: m.goodput, energy: m.energy, missing: m.missing, values: m.energy.map((e) => e.values) };
    } finally {
      await page.close();
    }
  }

  for (const width of [1280, 800]) {
    it(`report SWEEP.json -o PAGE.html at ${width} px: TTFT/TPOT, goodput and J/token charts against request rate`, async () => {
      const m = await open(p('sweep.html'), width);
      assert.equal(m.latency.length, 1, 'one TTFT/TPOT chart');
      assert.deepEqual(m.goodput, ['throughput:3,goodput:3,correct goodput:3'], 'throughput and goodput (an SLO was set): one point per rate');
      assert.deepEqual(m.latency[0]!.series, [3, 3], 'p99 TTFT and p99 TPOT: one point per rate');
      for (const label of ['20/s', '40/s', 'inf']) assert.ok(m.latency[0]!.text.includes(label), `point labelled ${label}: ${m.latency[0]!.text}`);
      assert.equal(m.energy.length, 1, 'one J/token chart (measured only)');
      assert.deepEqual(m.energy[0]!.series, [3]);
      assert.equal(m.energy[0]!.kind, 'measured');
      assert.match(m.energy[0]!.yName, /measured J \/ output token \[rapl\]/);
      assert.deepEqual(m.values[0], sweep.curve.map((pt) => pt.joules_per_output_token), 'the chart draws the curve\'s figures');
      assert.deepEqual(m.missing, {});
    });

    it(`run --request-rate 30,inf -o PAGE.html with no energy at ${width} px: the J/token chart is a sentence`, async () => {
      const m = await open(p('direct.html'), width);
      assert.deepEqual(m.latency[0]?.series, [2, 2]);
      assert.deepEqual(m.goodput, ['throughput:2'], 'no SLO: throughput alone');
      assert.match(m.missing['rate-goodput']?.join(' ') ?? '', /Goodput n\/a: no SLO was set/);
      assert.equal(m.energy.length, 0);
      assert.match(m.missing['rate-energy']?.join(' ') ?? '', /No J\/output-token chart: no rate has an energy figure/);
    });
  }

  it('one rate alone: both charts are sentences saying why (no browser needed)', () => {
    const html = readFileSync(p('one.html'), 'utf8');
    assert.match(html, /data-missing-chart="rate-latency">No TTFT\/TPOT chart: only one rate \(20\/s\) was run/);
    assert.match(html, /data-missing-chart="rate-energy">No measured J\/output-token chart: only one rate \(20\/s\) has a measured J\/output-token figure \[rapl\]/);
    assert.doesNotMatch(html, /<div class="chart"[^>]*data-chart="rate-/);
  });

  it('report of one load run prints its serving table (TTFT, TPOT and ITL, goodput, energy)', async () => {
    const r = await cli(['report', p('sweep.rate-20.json')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /load: 6 requests at 20\/s/);
    for (const row of ['TTFT ms', 'TPOT ms', 'ITL ms', 'E2EL ms']) assert.match(r.stdout, new RegExp(`^  ${row} `, 'm'), row);
    assert.match(r.stdout, /goodput \(ttft_ms≤5000\)/);
  });

  it('a rate sweep document naming a missing results file is one line, exit 2', async () => {
    writeFileSync(p('broken.json'), JSON.stringify({ format: 'joulebench-rate-sweep/1', rates: [1], reports: [null], results: ['gone.results.jsonl'], curve: [] }));
    const r = await cli(['report', p('broken.json'), '-o', p('broken.html')]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /broken\.json: not a rate sweep \(results\[0\]: .*gone\.results\.jsonl does not exist\)/);
  });
});
