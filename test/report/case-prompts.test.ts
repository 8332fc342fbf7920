import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { CaseResult, ResultsHeader, Suite } from '../../src/core/types.js';
import { casePrompt, parseSelection, resolvePrompts } from '../../src/report/case-prompts.js';
import { buildHtmlModel, renderHtmlPage } from '../../src/report/html/index.js';
import { PROMPT_BUDGET_CHARS } from '../../src/report/html/model.js';
import { run } from '../../src/runner/run.js';
import { suiteDigest } from '../../src/suites/digest.js';
import { loadSuite, loadSuiteFile } from '../../src/suites/loader.js';
import { loadMtBench } from '../../src/suites/mt-bench.js';
import { withRetryLabel } from '../../src/suites/retry-label.js';
import { describeSelection, selectCases, type Selection } from '../../src/suites/select.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-prompts-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The header a run of `suite` (as selected) writes, and one result per case in suite order. */
function asRun(suite: Suite, source: string): { header: ResultsHeader; results: CaseResult[] } {
  const header: ResultsHeader = {
    record: 'header',
    format: 'joulebench-results/1',
    suite: suite.name,
    suite_version: suite.version,
    suite_digest: suiteDigest(suite),
    target: 't',
    config_digest: 'sha256:0',
    warmup: 0,
    repeats: 1,
    meter: 'none',
    suite_source: source,
  };
  return { header, results: suite.cases.map((c, index) => ({ index, case_id: c.id }) as CaseResult) };
}

function suiteFile(name: string, cases: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ name: 'p', version: '2', cases }));
  return path;
}

describe('reading prompts back from a run\'s suite', () => {
  const cases = [
    { id: 'a-1', prompt: 'first', expected: 'x', tags: ['t'] },
    { id: 'b-2', turns: ['turn one', 'turn two'], expected: null },
    { id: 'a-3', prompt: 'third', expected: 'y' },
  ];

  it('gives every turn of each case when the suite still hashes to the run\'s digest', () => {
    const path = suiteFile('same.json', cases);
    const { header, results } = asRun(loadSuiteFile(path), path);
    const p = resolvePrompts(header, results);
    assert.ok(p.ok, JSON.stringify(p));
    assert.equal(p.source, path);
    assert.deepEqual(p.turnsOf(0), ['first']);
    assert.deepEqual(p.turnsOf(1), ['turn one', 'turn two']);
  });

  it('applies the run\'s --filter/--limit and retry label again from its version', () => {
    const path = suiteFile('sel.json', cases);
    const whole = loadSuiteFile(path);
    for (const sel of [{ filter: '^a-' }, { limit: 2 }, { filter: '^a-', limit: 1 }] as Selection[]) {
      const retried = { ...whole, version: withRetryLabel(whole.version, 3) };
      const suite = selectCases(retried, sel);
      const { header, results } = asRun(suite, path);
      const p = resolvePrompts(header, results);
      assert.ok(p.ok, `${JSON.stringify(sel)}: ${JSON.stringify(p)}`);
      assert.deepEqual(suite.cases.map((_, i) => p.turnsOf(i)?.[0]), suite.cases.map((c) => c.prompt ?? c.turns![0]));
    }
  });

  it('reads a selection back exactly, whatever the filter holds', () => {
    for (const sel of [{ filter: 'a/,limit=3' }, { filter: 'x', limit: 5 }, { limit: 7 }, { filter: '/' }, { filter: 'a,limit=2/', limit: 1 }] as Selection[]) {
      assert.deepEqual(parseSelection(describeSelection(sel)), sel);
    }
    assert.equal(parseSelection('nonsense'), null);
  });

  it('refuses a suite edited after the run (digest differs), one removed (not found), one that no longer loads', () => {
    const path = suiteFile('edited.json', cases);
    const { header, results } = asRun(loadSuiteFile(path), path);
    suiteFile('edited.json', [{ ...cases[0], prompt: 'INJECTED new text' }, ...cases.slice(1)]);
    const edited = resolvePrompts(header, results);
    assert.equal(edited.ok, false);
    assert.match(!edited.ok ? edited.reason : '', /^suite changed since the run: digest differs \(run [0-9a-f]{12}, .*edited\.json now [0-9a-f]{12}\)$/);
    // Only the expected answer changed: still not the suite that was run.
    suiteFile('edited.json', [{ ...cases[0], expected: 'z' }, ...cases.slice(1)]);
    assert.equal(resolvePrompts(header, results).ok, false);
    // Its version changed (same cases): the version is part of what was run.
    writeFileSync(path, JSON.stringify({ name: 'p', version: '3', cases }));
    assert.equal(resolvePrompts(header, results).ok, false);
    // A file that no longer parses: said, without quoting it (a results file from someone else names the path).
    writeFileSync(path, '{ "secret": "hunter2" ');
    const broken = resolvePrompts(header, results);
    assert.equal(!broken.ok ? broken.reason : '', `suite does not load now: ${path} (joulebench run -s ${path} says why)`);
    writeFileSync(path, JSON.stringify({ name: 'p', cases: [{ id: 'hunter2', prompt: 1 }] }));
    assert.doesNotMatch(JSON.stringify(resolvePrompts(header, results)), /hunter2/);
    rmSync(path);
    const gone = resolvePrompts(header, results);
    assert.equal(!gone.ok ? gone.reason : '', `suite file not found: ${path}`);
  });

  describe('a JSONL suite (read as the run streamed it, keeping only the cases the results name)', () => {
    const jsonl = (name: string, rows: unknown[]) => {
      const path = join(dir, name);
      writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      return path;
    };

    it('gives each case\'s turns, under the run\'s selection and retry label, as loading it whole does', () => {
      const path = jsonl('s.jsonl', cases);
      const whole = loadSuiteFile(path);
      for (const sel of [null, { filter: '^a-' }, { limit: 2 }, { filter: '^a-', limit: 1 }] as (Selection | null)[]) {
        for (const retry of [null, 3]) {
          const labelled = retry === null ? whole : { ...whole, version: withRetryLabel(whole.version, retry) };
          const suite = sel ? selectCases(labelled, sel) : labelled;
          const { header, results } = asRun(suite, path);
          const p = resolvePrompts(header, results);
          assert.ok(p.ok, `${JSON.stringify(sel)} retry ${retry}: ${JSON.stringify(p)}`);
          assert.equal(p.source, path);
          assert.deepEqual(suite.cases.map((_, i) => p.turnsOf(i)), suite.cases.map((c) => c.turns ?? [c.prompt]));
        }
      }
    });

    it('refuses an edited, broken or removed file, and a result that names another case, without quoting the file', () => {
      const path = jsonl('e.jsonl', cases);
      const { header, results } = asRun(loadSuiteFile(path), path);
      jsonl('e.jsonl', [{ ...cases[0], prompt: 'INJECTED new text' }, ...cases.slice(1)]);
      const edited = resolvePrompts(header, results);
      const now = suiteDigest({ ...loadSuiteFile(path), version: header.suite_version }).replace(/^sha256:/, '').slice(0, 12);
      assert.equal(!edited.ok ? edited.reason : '', `suite changed since the run: digest differs (run ${header.suite_digest.slice(7, 19)}, ${path} now ${now})`);
      jsonl('e.jsonl', cases);
      const wrong = resolvePrompts(header, [{ index: 2, case_id: 'someone-else' } as CaseResult]);
      assert.equal(!wrong.ok ? wrong.reason : '', 'case 2 of the results is "someone-else", the suite\'s is "a-3"');
      const beyond = resolvePrompts(header, [{ index: 9, case_id: 'a-1' } as CaseResult]);
      assert.equal(!beyond.ok ? beyond.reason : '', 'case 9 of the results is "a-1", the suite\'s is "(none)"');
      writeFileSync(path, '{"id":"hunter2","prompt":1}\n');
      const broken = resolvePrompts(header, results);
      assert.equal(!broken.ok ? broken.reason : '', `suite does not load now: ${path} (joulebench run -s ${path} says why)`);
      assert.doesNotMatch(JSON.stringify(broken), /hunter2/);
      rmSync(path);
      assert.equal(JSON.stringify(resolvePrompts(header, results)), JSON.stringify({ ok: false, reason: `suite file not found: ${path}` }));
    });
  });

  it('says why when the header names no suite source (older files, mmlu), and for bundled suites uses the bundled data', () => {
    const suite = loadSuite('router');
    const { header, results } = asRun(suite, 'router');
    const { suite_source: _s, ...old } = header;
    const none = resolvePrompts(old, results);
    assert.match(!none.ok ? none.reason : '', /does not say where suite "router" was read from/);
    const bundled = resolvePrompts(header, results);
    assert.ok(bundled.ok);
    assert.equal(bundled.source, 'bundled suite "router"');
    assert.deepEqual(bundled.turnsOf(0), [suite.cases[0]!.prompt]);
    // A results line whose case id is not the suite's at that index is not this run's.
    const wrong = resolvePrompts(header, [{ index: 0, case_id: 'someone-else' } as CaseResult]);
    assert.match(!wrong.ok ? wrong.reason : '', /case 0 of the results is "someone-else"/);
  });

  it('reads MT-Bench questions and references back, every turn; an edited reference file refuses them; MMLU says why it cannot', () => {
    const q = join(dir, 'question.jsonl');
    const refs = join(dir, 'reference.jsonl');
    writeFileSync(q, ['{"question_id":81,"category":"writing","turns":["Write a haiku.","Now make it rhyme."]}', '{"question_id":82,"category":"math","turns":["2+2?","Times 3?"]}'].join('\n'));
    writeFileSync(refs, '{"question_id":82,"choices":[{"turns":["4","12"]}]}\n');
    const { header, results } = asRun(loadMtBench(q, { references: refs }), 'mt-bench');
    const h = { ...header, suite_data: q, suite_references: refs };
    const p = resolvePrompts(h, results);
    assert.ok(p.ok, JSON.stringify(p));
    assert.deepEqual(p.turnsOf(0), ['Write a haiku.', 'Now make it rhyme.']);
    assert.equal(p.source, `MT-Bench questions ${q}`);
    // The references are part of what was asked of the judge: read without them, the digest differs.
    const { suite_references: _r, ...noRefs } = h;
    assert.match(JSON.stringify(resolvePrompts(noRefs, results)), /digest differs/);
    writeFileSync(refs, '{"question_id":82,"choices":[{"turns":["4","13"]}]}\n');
    assert.match(JSON.stringify(resolvePrompts(h, results)), /suite changed since the run: digest differs/);
    rmSync(refs);
    assert.deepEqual(resolvePrompts(h, results), { ok: false, reason: `suite file not found: ${refs}` });
    const mmlu = resolvePrompts({ ...header, suite: 'mmlu', suite_source: undefined }, results);
    assert.match(!mmlu.ok ? mmlu.reason : '', /MMLU's suite digest covers the question ids and version, not the question text/);
  });

  it('keeps each turn\'s answer of a conversation for the detail', async () => {
    const path = suiteFile('conv.json', cases);
    const suite = loadSuiteFile(path);
    const out = await run({ suite, target: createReferenceCascade(), idle_ms: 0 });
    const results = out.results.map((r) => (r.case_id === 'b-2' ? { ...r, turns: [{ response: 'hi' }, { response: 'bye' }] as CaseResult['turns'] } : r));
    const model = buildHtmlModel([{ label: 'conv', origin: path, report: out.report, results, receipt: null, run_id: null, header: { ...out.header, suite_source: path } }], 't');
    assert.deepEqual(model.cases.find((c) => c.id === 'b-2')?.turn_answers, ['hi', 'bye']);
    assert.equal(model.cases.find((c) => c.id === 'a-1')?.turn_answers, undefined);
    assert.deepEqual(model.runs[0]!.prompts!.turns[1], ['turn one', 'turn two']);
  });

  it('keeps a 10,000-case page small: prompts embedded once per case, within the budget, the rest counted and said', async () => {
    const n = 10_000;
    const path = suiteFile(
      'big.json',
      Array.from({ length: n }, (_, i) => ({ id: `c${i}`, prompt: `${i} ${'q'.repeat(400)}`, expected: String(i) })),
    );
    const suite = loadSuiteFile(path);
    const out = await run({ suite, target: createReferenceCascade(), repeats: 2, idle_ms: 0 });
    const loaded = { label: 'big', origin: path, report: out.report, results: out.results, receipt: null, run_id: null, header: { ...out.header, suite_source: path } };
    const model = buildHtmlModel([loaded], '2026-01-01T00:00:00.000Z');
    const p = model.runs[0]!.prompts!;
    assert.equal(p.missing, null);
    const kept = Object.keys(p.turns).length;
    const chars = Object.values(p.turns).reduce((s, t) => s + t.join('').length, 0);
    assert.ok(chars <= PROMPT_BUDGET_CHARS, `${chars} prompt characters embedded`);
    assert.equal(kept + p.omitted, n, 'each case once, not once per pass');
    assert.ok(p.omitted > 0 && kept > 1000, `kept ${kept}, omitted ${p.omitted}`);
    process.stderr.write(`# 10k cases: ${kept} prompts kept, ${p.omitted} left out\n`);
    const html = renderHtmlPage(model, '/* echarts */');
    // The prompts add at most their budget (plus a little JSON) to what the case rows already cost.
    const bare = renderHtmlPage({ ...model, runs: model.runs.map((r) => ({ ...r, prompts: { ...r.prompts!, turns: {} } })) }, '/* echarts */');
    assert.ok(html.length - bare.length <= PROMPT_BUDGET_CHARS * 1.05, `prompts added ${html.length - bare.length} characters to ${bare.length}`);
    assert.match(html, new RegExp(`${p.omitted} prompts left out to keep this page small`));
  });
});

describe('casePrompt: the prompt the viewer shows for one case line', () => {
  const cases = [
    { id: 'one', prompt: 'first', expected: 'x' },
    { id: 'conv', turns: ['turn one', 'turn two', 'turn three'], expected: null },
  ];
  const path = suiteFile('case-prompt.json', cases);
  const { header, results } = asRun(loadSuiteFile(path), path);

  it('prefers the line\'s own prompt; says why when the run kept none or the line has none', () => {
    const line = { ...results[0]!, prompt: 'as sent' };
    assert.deepEqual(casePrompt({ ...header, prompts: 'text' }, line, null), { ok: true, prompt: 'as sent', source: 'results file' });
    assert.deepEqual(casePrompt({ ...header, prompts: 'none' }, results[0]!, resolvePrompts(header, results)), { ok: false, reason: 'prompts not stored: the run used --no-store-prompts' });
    assert.equal(casePrompt({ ...header, prompts: 'text' }, results[0]!, null).ok, false);
  });

  it('reads an index run back: a single prompt, a multi-turn case joined as sent, a conversation as its last request\'s messages', () => {
    for (const h of [{ ...header, prompts: 'index' as const }, header]) {
      const lookup = resolvePrompts(h, results);
      assert.deepEqual(casePrompt(h, results[0]!, lookup), { ok: true, prompt: 'first', source: path });
      assert.deepEqual(casePrompt(h, results[1]!, lookup), { ok: true, prompt: 'turn one\nFollow-up: turn two\nFollow-up: turn three', source: path });
      // A conversation that stopped after its second turn failed: two requests were sent.
      const turn = (response: string | null) => ({ response }) as NonNullable<CaseResult['turns']>[number];
      const conv = { ...results[1]!, turns: [turn('answer one'), turn(null)] };
      assert.deepEqual(casePrompt(h, conv, lookup), {
        ok: true,
        prompt: [
          { role: 'user', content: 'turn one' },
          { role: 'assistant', content: 'answer one' },
          { role: 'user', content: 'turn two' },
        ],
        source: path,
      });
    }
    assert.deepEqual(casePrompt(header, results[0]!, { ok: false, reason: 'why' }), { ok: false, reason: 'why' });
    const loadTurn = { ...results[1]!, meta: { load: { turn: 2 } } };
    assert.match((casePrompt(header, loadTurn, resolvePrompts(header, results)) as { reason: string }).reason, /load run's conversation turn/);
  });
});
