import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { aggregate } from '../../src/core/aggregate.js';
import { prettyJson } from '../../src/core/canonical.js';
import { buildHtmlReport } from '../../src/report/html/index.js';
import { loadInputs } from '../../src/report/load-inputs.js';
import { cli as runCli, type CliResult } from '../helpers/cli.js';
import { FakeOllama } from '../helpers/fake-ollama.js';
import { CTX, result } from '../helpers/results.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Every report kind through report/frontier/history: a coding-agent results file and an infer run file,
 * both written by the real commands (which also record them in the history), beside a suite report.
 */
describe('report, frontier and history with code results and infer run files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-kinds-'));
  const home = join(dir, 'home');
  const codeJson = join(dir, 'agents.json');
  const inferJson = join(dir, 'local.json');
  const suiteJson = join(dir, 'suite.json');
  const rapl = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }], dir);
  let counter_uj = 0;
  const fake = new FakeOllama({
    models: { m1: { parameter_count: 1e6 } },
    load_ms: 5,
    prefill_ms_per_token: 0.05,
    decode_tok_s: () => 20,
    reply: () => 'ok',
    onGeneration: () => setEnergy(rapl.root, 'intel-rapl:0', (counter_uj += 1_000_000)),
  });
  const env = { JOULEBENCH_POWERCAP_ROOT: rapl.root, CUDA_VISIBLE_DEVICES: '' };
  /** The built CLI with this test's history; `extra` env only where asked (the fake RAPL tree, for infer). */
  const jb = (args: string[], extra: Record<string, string> = {}): Promise<CliResult> => runCli(args, { cwd: dir, env: { JOULEBENCH_HOME: home, ...extra } });
  let browser: Browser | null = null;

  before(async () => {
    const url = await fake.start();
    writeFileSync(join(dir, 'snap.txt'), '0, 100 MiB\n');
    const inferArgs = ['infer', '--model', 'm1', '--base-url', url, '--runs', '2', '--warmup', '1', '--cold', '1', '--num-predict', '3', '--gpu-snapshot-cmd', `cat '${join(dir, 'snap.txt')}'`, '--peak-flops', '1e11', '--quiet'];
    const [code, infer] = await Promise.all([
      // The estimate meter: deterministic to run anywhere, and a measured-looking figure to place on the frontier.
      jb(['code', '--solvers', 'reference,noop', '--tasks', 'off-by-one', '--sandbox', 'none', '--meter', 'estimate', '--out', codeJson, '--quiet']),
      jb([...inferArgs, '--out', inferJson], env),
    ]);
    assert.equal(code.code, 0, `code: ${code.stderr}`);
    assert.equal(infer.code, 0, `infer: ${infer.stderr}`);
    const skipped = await jb([...inferArgs, '--out', join(dir, 'not-recorded.json'), '--no-history'], env);
    assert.equal(skipped.code, 0, `infer --no-history: ${skipped.stderr}`);
    // A suite report with whole-suite energy: gross 50 J over 4 s at 3.5 W idle (net 36 J), one case with no energy.
    const report = aggregate(
      [
        result({ case_id: 'a', joules: 2, energy_source: 'rapl' }),
        result({ case_id: 'b', joules: null, energy_source: 'none' }),
        result({ case_id: 'c', joules: 1, energy_source: 'rapl', passed: false }),
      ],
      {
        ...CTX,
        meter: 'rapl',
        energy: {
          idle: { status: 'measured', watts: 3.5, by_domain_watts: {}, window_ms: 1000, source: 'rapl' },
          suite: { joules: 50, source: 'rapl', by_domain: {}, window_ms: 4000, below_floor: false },
        },
      },
    );
    writeFileSync(suiteJson, prettyJson(report));
  });
  after(async () => {
    await browser?.close();
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('code and infer record into the history, listed with their kind; --no-history records nothing', async () => {
    const r = await jb(['history', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as { id: number; kind: string; format: string; suite_digest: string | null; report_path: string | null }[];
    assert.deepEqual(rows.map((x) => x.kind).sort(), ['code', 'infer'], `one code and one infer run: ${r.stdout}`);
    const inferRow = rows.find((x) => x.kind === 'infer')!;
    assert.equal(inferRow.format, 'joulebench-infer/1');
    assert.match(inferRow.suite_digest ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal(inferRow.report_path, inferJson);
    const table = await jb(['history']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /\bkind\b/);
    assert.match(table.stdout, /#\d+\s+code\b.*solvers: reference, noop/);
    assert.match(table.stdout, /#\d+\s+infer\b.*ollama: m1@t=default.*n\/a \(infer: not graded\)/);
  });

  it('frontier --json: each solver is an arm (accuracy = resolution %), infer arms are not placed, with the reason', async () => {
    const r = await jb(['frontier', codeJson, inferJson, suiteJson, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const f = JSON.parse(r.stdout) as {
      arms: { id: string; accuracy_pct: number | null; joules_per_correct: number | null; latency_p95_ms: number | null }[];
      arm_kinds: Record<string, string>;
      not_placed: { id: string; kind: string; reason: string }[];
      frontiers: { latency: { frontier: string[] } };
    };
    const ids = f.arms.map((a) => a.id);
    assert.deepEqual(ids, ['agents · reference', 'agents · noop', 'suite']);
    assert.equal(f.arms[0]!.accuracy_pct, 100, 'the reference solver resolves its task');
    assert.equal(f.arms[1]!.accuracy_pct, 0, 'noop resolves nothing');
    assert.ok((f.arms[0]!.latency_p95_ms ?? 0) > 0, 'p95 of the solver wall time is measured');
    assert.equal(f.arm_kinds['agents · noop'], 'code');
    assert.equal(f.arm_kinds.suite, 'suite');
    assert.deepEqual(f.not_placed.map((a) => a.id), ['local · m1@t=default']);
    assert.match(f.not_placed[0]!.reason, /no accuracy/);
    assert.ok(!JSON.stringify(f.frontiers).includes('m1@t='), 'an infer arm is on no frontier');
    const text = await jb(['frontier', codeJson, inferJson]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /not placed: local · m1@t=default/);
    assert.match(text.stdout, /infer arm: no accuracy/);
  });

  it('report --md renders each kind; run ids work for report and frontier', async () => {
    const r = await jb(['report', codeJson, inferJson, suiteJson, '--md']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /### joulebench code · agents/);
    assert.match(r.stdout, /\| reference \| 1\/1 \| 100\.0 % \|/);
    assert.match(r.stdout, /\| noop \| 0\/1 \| 0\.0 % \| n\/a `estimate/);
    assert.match(r.stdout, /### joulebench infer · local/);
    assert.match(r.stdout, /\| local · m1@t=default \| 20\.00 \|/, 'decode tok/s median of the fake server');
    assert.match(r.stdout, /CPU-only/);
    assert.match(r.stdout, /\| whole-suite energy \| gross 50\.00 J `rapl` · net 36\.00 J \| idle 3\.50 W · .*energy unknown for 1 case \|/);
    const rows = JSON.parse((await jb(['history', '--json'])).stdout) as { id: number; kind: string }[];
    const ids = rows.map((x) => String(x.id));
    const byId = await jb(['report', ...ids, '--md']);
    assert.equal(byId.code, 0, byId.stderr);
    assert.match(byId.stdout, /### joulebench code · #\d+/);
    assert.match(byId.stdout, /### joulebench infer · #\d+/);
    const fr = await jb(['frontier', ...ids, '--json']);
    assert.equal(fr.code, 0, fr.stderr);
    const f = JSON.parse(fr.stdout) as { arms: { id: string }[]; not_placed: { id: string }[] };
    assert.equal(f.arms.length, 2, 'two solver arms from the code run');
    assert.equal(f.not_placed.length, 1, 'one infer arm');
  });

  it('compare refuses a code results file, naming what it is', async () => {
    const r = await jb(['compare', codeJson, suiteJson]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /a joulebench code results file, not a suite report/);
  });

  describe('the HTML page in headless Chromium', { skip: !existsSync(CHROMIUM) && process.env.JOULEBENCH_SKIP_BROWSER ? 'no chromium' : false }, () => {
    let page: Page;
    const problems: string[] = [];
    const open = async (html: string): Promise<Page> => {
      browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
      const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      p.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(`${html}: ${m.type()}: ${m.text()}`);
      });
      p.on('pageerror', (e) => problems.push(`${html}: pageerror: ${e.message}`));
      await p.goto(pathToFileURL(html).href);
      await p.waitForSelector('body[data-ready="1"]', { timeout: 15_000 });
      return p;
    };
    before(async () => {
      const html = join(dir, 'all.html');
      const r = await jb(['report', suiteJson, codeJson, inferJson, '--html', html]);
      assert.equal(r.code, 0, r.stderr);
      page = await open(html);
    });

    it('renders the code and infer sections and the charts, with no console error', async () => {
      const charts = await page.$$eval('.chart', (els) => els.map((el) => ({ id: el.id, rendered: el.getAttribute('data-rendered'), shapes: el.querySelectorAll('svg path, svg rect').length })));
      assert.ok(charts.some((c) => c.id === 'chart-infer'), 'the infer chart is on the page');
      for (const c of charts) {
        assert.equal(c.rendered, '1', `${c.id} not rendered`);
        assert.ok(c.shapes > 3, `${c.id} has ${c.shapes} shapes`);
      }
      // The suite run has no J/correct (one case's energy is unknown), the solvers' joules are estimated:
      // one placed arm is no chart (one dot shows no trade-off); the page says why instead.
      assert.ok(!charts.some((c) => c.id.startsWith('chart-frontier')), charts.map((c) => c.id).join(' '));
      assert.match((await page.textContent('#frontier')) ?? '', /only one arm \(agents · reference\) has figures/);
      const code = await page.$eval('#code', (el) => el.textContent ?? '');
      assert.match(code, /reference[\s\S]*100\.0 %[\s\S]*1\/1 tasks resolved/);
      assert.match(code, /noop[\s\S]*0\.0 %[\s\S]*nothing resolved|noop[\s\S]*energy unknown/);
      const inferRows = await page.$$eval('#infer tr.infer-arm', (trs) => trs.map((tr) => tr.textContent ?? ''));
      assert.equal(inferRows.length, 1);
      assert.match(inferRows[0]!, /local · m1@t=default/);
      assert.match(inferRows[0]!, /20\.00/);
      assert.match(inferRows[0]!, /CPU-only/);
      const heads = await page.$$eval('#infer th', (ths) => ths.map((th) => th.textContent ?? ''));
      for (const h of ['cached-prefix first token', 'fresh prompt, model already loaded', 'fully cold first token', 'decode throughput, tok/s', 'J / decoded token']) {
        assert.ok(heads.some((x) => x.includes(h)), `infer header "${h}" in ${heads.join(' | ')}`);
      }
      assert.match((await page.textContent('#not-placed')) ?? '', /local · m1@t=default.*no accuracy/);
      assert.deepEqual(problems, []);
    });

    it('shows whole-suite gross/net energy with its source, idle watts and the unknown-energy count', async () => {
      const cell = await page.$eval('#headline td.suite-energy', (el) => el.textContent ?? '');
      assert.match(cell, /gross 50\.00 J \[rapl\]/);
      assert.match(cell, /net 36\.00 J/);
      assert.match(cell, /idle 3\.50 W/);
      assert.match(cell, /energy unknown for 1 case/);
    });

    it('an infer-only or code-only page renders alone, without error', async () => {
      for (const [name, file] of [['infer-only', inferJson], ['code-only', codeJson]] as const) {
        const html = join(dir, `${name}.html`);
        // Through the library (the CLI path is covered above): the same page, without another Node start.
        writeFileSync(html, buildHtmlReport(loadInputs([file], null)));
        const p = await open(html);
        assert.equal(await p.$('#headline'), null, `${name}: no suite headline`);
        await p.close();
      }
      assert.deepEqual(problems, []);
      const shot = join(process.env.JB_SHOT_DIR ?? dir, 'kinds.png');
      await page.screenshot({ path: shot, fullPage: true });
      assert.ok(readFileSync(shot).length > 20_000, 'screenshot written');
    });
  });
});
