import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchChromium, openReport, overflow } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';

/** A prompt that tries to break out of every place it could land: element text, a <details>, an attribute, the JSON script. */
const HOSTILE = `<script>window.__pwned = 1</script></details></td></tr>"quoted" 'single' </script><!-- <img src=x onerror="window.__pwned=2">`;

/**
 * The per-case view links each case to its prompt, expected answer and answer. Prompts are
 * read back from the suite the run names, and only while that suite still hashes to the run's digest.
 */
describe('each case links to its prompt, answer and expected (headless Chromium)', { skip: browserSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-html-prompts-'));
  const p = (f: string): string => join(dir, f);
  const jb = (args: string[]) => cli(args, { cwd: dir, env: { JOULEBENCH_HOME: join(dir, 'home') } });
  let browser: Browser;
  let server: FakeServer | undefined;
  const html = p('cases.html');
  // A folder name that needs escaping wherever the page names the suite file.
  const goneSuite = p('gone "<b>x<b>".json');

  before(async () => {
    writeFileSync(
      p('hostile.json'),
      JSON.stringify({
        name: 'hostile',
        cases: [
          { id: 'evil', prompt: HOSTILE, expected: '</details><b>4</b>' },
          { id: 'talk', turns: ['first turn: say hi', 'second turn: say bye'], expected: null },
          { id: 'long', prompt: `start ${'w'.repeat(1000)} ${'unbroken'.repeat(400)}`, expected: 'x' },
        ],
      }),
    );
    writeFileSync(p('edited.json'), JSON.stringify({ name: 'edited', cases: [{ id: 'e1', prompt: 'what was asked', expected: 'a' }] }));
    writeFileSync(goneSuite, JSON.stringify({ name: 'gone', cases: [{ id: 'g1', prompt: 'gone prompt', expected: 'a' }] }));
    // A chat endpoint asks a multi-turn case one turn at a time: each turn has its own answer.
    server = await startFakeOpenAI((req) => {
      const msgs = req.body.messages as { role: string; content: string }[];
      return { kind: 'plain', text: `reply to: ${msgs[msgs.length - 1]!.content}` };
    });
    writeFileSync(p('conv.json'), JSON.stringify({ name: 'conv', cases: [{ id: 'chat', turns: ['Name a colour.', 'Now another.'], expected: null }] }));
    // More cases than the table draws at once (500): an address past them still opens its case.
    writeFileSync(p('many.json'), JSON.stringify({ name: 'many', cases: Array.from({ length: 600 }, (_, i) => ({ id: `m${i}`, prompt: `question number ${i}`, expected: String(i) })) }));
    writeFileSync(p('conv2.json'), JSON.stringify({ name: 'conv2', cases: [{ id: 'chat2', turns: ['Pick a number.', 'Double it.'], expected: null }] }));
    const runs = await Promise.all([
      jb(['run', '-q', '--no-history', '-s', 'conv.json', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--meter', 'model', '-o', p('conv-run.json')]),
      jb(['run', '-q', '--no-history', '-s', 'many.json', '--warmup', '0', '-o', p('many-run.json')]),
      jb(['run', '-q', '--no-history', '-s', 'conv2.json', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '--meter', 'model', '-o', p('conv2-run.json')]),
      jb(['run', '-q', '--no-history', '-s', 'hostile.json', '-o', p('hostile-run.json')]),
      jb(['run', '-q', '--no-history', '-s', 'edited.json', '-o', p('edited-run.json')]),
      jb(['run', '-q', '--no-history', '-s', goneSuite, '-o', p('gone-run.json')]),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    // The attack: the suite is edited after the run. The page must not show the new text as if it had been asked.
    writeFileSync(p('edited.json'), JSON.stringify({ name: 'edited', cases: [{ id: 'e1', prompt: 'INJECTED AFTER THE RUN', expected: 'a' }] }));
    rmSync(goneSuite);
    rmSync(p('conv2.json'));
    const r = await jb(['report', p('hostile-run.json'), p('edited-run.json'), p('gone-run.json'), p('conv-run.json'), p('conv2-run.json'), p('many-run.json'), '-o', html]);
    assert.equal(r.code, 0, r.stderr);

    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (!process.env.JOULEBENCH_KEEP_SCREENSHOTS) rmSync(dir, { recursive: true, force: true });
  });

  const open = (width: number, hash = ''): Promise<{ page: Page; problems: string[]; requests: string[] }> => openReport(browser, html, width, hash);

  /** The open detail row of a case as dt → dd text. */
  async function detail(page: Page, run: string, id: string): Promise<Record<string, string>> {
    const key = `case-${encodeURIComponent(`${run}/${id}/0`)}`;
    const pairs = (await page.evaluate(`(() => {
      const d = document.getElementById(${JSON.stringify(key)});
      if (!d) return null;
      const dts = [...d.querySelectorAll('dt')];
      return dts.map((dt) => [dt.textContent, dt.nextElementSibling.textContent]);
    })()`)) as [string, string][] | null;
    assert.ok(pairs, `no open detail row ${key}`);
    return Object.fromEntries(pairs);
  }

  it('the link of a case opens its prompt (as text, never markup), expected answer and answer', async () => {
    const { page, problems, requests } = await open(1280);
    await page.click('tr.case[data-key*="evil"] a.case-link');
    const d = await detail(page, 'hostile-run', 'evil');
    assert.equal(d.prompt, HOSTILE);
    assert.equal(d.expected, '</details><b>4</b>');
    assert.ok('answer' in d && 'error' in d, JSON.stringify(d));
    assert.equal(await page.evaluate('window.__pwned === undefined'), true, 'the hostile prompt ran');
    assert.equal(await page.evaluate('document.scripts.length'), 3, 'no script element came from data');
    assert.equal(await page.evaluate('document.querySelectorAll("img").length'), 0);
    assert.equal(await page.getAttribute('tr.case[data-key*="evil"] a.case-link', 'aria-expanded'), 'true');
    // A second click closes it.
    await page.click('tr.case[data-key*="evil"] a.case-link');
    assert.equal(await page.$$eval('tr.case-detail', (rows) => rows.length), 0);
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
    await page.close();
  });

  it('a multi-turn case shows every turn', async () => {
    const { page } = await open(1280);
    await page.click('tr.case[data-key*="talk"] a.case-link');
    const d = await detail(page, 'hostile-run', 'talk');
    assert.equal(d['prompt, turn 1'], 'first turn: say hi');
    assert.equal(d['prompt, turn 2'], 'second turn: say bye');
    assert.equal(d.expected, '(unscored: no expected answer)');
    // Asked as a conversation: each turn's own answer follows its prompt.
    await page.click('tr.case[data-key*="chat%2F"] a.case-link');
    const c = await detail(page, 'conv-run', 'chat');
    assert.deepEqual(Object.keys(c), ['prompt, turn 1', 'answer, turn 1', 'prompt, turn 2', 'answer, turn 2', 'expected', 'error']);
    assert.equal(c['prompt, turn 2'], 'Now another.');
    assert.equal(c['answer, turn 1'], 'reply to: Name a colour.');
    assert.equal(c['answer, turn 2'], 'reply to: Now another.');
    // Its suite removed: no prompt, but each turn's answer is still there.
    await page.click('tr.case[data-key*="chat2"] a.case-link');
    const c2 = await detail(page, 'conv2-run', 'chat2');
    assert.deepEqual(Object.keys(c2), ['prompt', 'expected', 'answer, turn 1', 'answer, turn 2', 'error']);
    assert.match(c2.prompt ?? '', /^not shown: suite file not found: .*conv2\.json$/);
    assert.equal(c2['answer, turn 2'], 'reply to: Double it.');
    await page.close();
  });

  it('a #case- address opens that case when the page loads', async () => {
    const { page, problems } = await open(1280, `#case-${encodeURIComponent('hostile-run/long/0')}`);
    const d = await detail(page, 'hostile-run', 'long');
    // Clipped at 2,000 characters, and says by how much.
    assert.ok((d.prompt ?? '').startsWith(`start ${'w'.repeat(1000)} unbrokenunbroken`), (d.prompt ?? '').slice(0, 40));
    assert.match(d.prompt ?? '', /[a-z]… \(2207 more characters\)$/);
    assert.ok(await page.isVisible(`[id="case-${encodeURIComponent('hostile-run/long/0')}"]`));
    assert.deepEqual(problems, []);
    await page.close();
    // Past the first 500 rows drawn: the table narrows to that case and opens it.
    const far = await open(1280, `#case-${encodeURIComponent('many-run/m599/0')}`);
    assert.deepEqual((await detail(far.page, 'many-run', 'm599')).prompt, 'question number 599');
    assert.equal(await far.page.inputValue('#case-search'), 'm599');
    assert.deepEqual(far.problems, []);
    await far.page.close();
  });

  it('a suite edited after the run shows that the digest differs, never the new text; a removed one says not found', async () => {
    const text = readFileSync(html, 'utf8');
    assert.doesNotMatch(text, /INJECTED AFTER THE RUN/);
    // (The echo target answers with the prompt it was sent, so the old text is there as that run's answer.)
    const { page } = await open(1280);
    await page.click('tr.case[data-key*="e1"] a.case-link');
    const e = await detail(page, 'edited-run', 'e1');
    assert.match(e.prompt ?? '', /^not shown: suite changed since the run: digest differs \(run [0-9a-f]{12}, .*edited\.json now [0-9a-f]{12}\)$/);
    await page.click('tr.case[data-key*="g1"] a.case-link');
    const g = await detail(page, 'gone-run', 'g1');
    assert.equal(g.prompt, `not shown: suite file not found: ${goneSuite}`);
    // The note above the table says the same for each run, the file name escaped.
    const notes = await page.$$eval('ul.prompts li', (lis) => lis.map((li) => li.textContent ?? ''));
    assert.equal(notes.length, 6, notes.join(' | '));
    assert.match(notes[0]!, /^hostile-run: prompts read from .*hostile\.json, whose digest still equals the run's$/);
    assert.match(notes[1]!, /^edited-run: prompts not shown: suite changed since the run: digest differs/);
    assert.equal(notes[2], `gone-run: prompts not shown: suite file not found: ${goneSuite}`);
    assert.equal(await page.evaluate('document.querySelectorAll("ul.prompts b").length'), 0);
    await page.close();
  });

  for (const width of [1280, 800]) {
    it(`at ${width} px with every case open: no horizontal overflow, no console error, no request`, async () => {
      const { page, problems, requests } = await open(width);
      for (const a of await page.$$('tr.case:not([data-key*="many-run"]) a.case-link')) await a.click();
      assert.equal(await page.$$eval('tr.case-detail', (rows) => rows.length), 7);
      const m = await overflow(page);
      // Only taken to be kept: a full-page screenshot costs more than the checks.
      if (process.env.JOULEBENCH_KEEP_SCREENSHOTS) await page.screenshot({ path: join(dir, `cases-${width}.png`), fullPage: true });
      assert.ok(m.ok, `page wider than the window: ${JSON.stringify(m)}`);
      assert.deepEqual(problems, []);
      assert.deepEqual(requests, []);
      await page.close();
    });
  }
});
