import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { bundledCodeSuitesDir } from '../../src/code/paths.js';
import { browserSkip, launchChromium, openReport, overflow } from '../helpers/browser.js';
import { cli } from '../helpers/cli.js';

/**
 * The coding-agent page's per-task view: each task of the task × solver grid opens its prompt
 * (task.toml), read back from the suite only while the tasks still hash to the run's digest.
 */
describe('coding-agent tasks link to their prompts (headless Chromium)', { skip: browserSkip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'jb-html-code-prompts-'));
  const p = (f: string): string => join(dir, f);
  const jb = (args: string[]) => cli(args, { cwd: dir, env: { JOULEBENCH_HOME: join(dir, 'home') } });
  const codeHtml = p('code.html');
  let browser: Browser;

  before(async () => {
    // A coding suite of one task copied from the bundled one, to edit after its run.
    cpSync(join(bundledCodeSuitesDir(), 'smoke', 'async-map'), p('tasks/async-map'), { recursive: true });
    const runs = await Promise.all([
      jb(['code', '-q', '--no-history', '--suite', 'smoke', '--limit', '1', '--solvers', 'noop', '--sandbox', 'none', '-o', p('agents.json')]),
      jb(['code', '-q', '--no-history', '--suite', 'tasks', '--solvers', 'noop', '--sandbox', 'none', '-o', p('agents-edited.json')]),
    ]);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    // The attack: the task is edited after the run.
    const toml = p('tasks/async-map/task.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(/^prompt = .*$/m, 'prompt = "TASK TEXT INJECTED AFTER THE RUN"'));
    const rc = await jb(['report', p('agents.json'), p('agents-edited.json'), '-o', codeHtml]);
    assert.equal(rc.code, 0, rc.stderr);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a coding-agent task opens its task.toml prompt; a task edited after the run says the digest differs', async () => {
    assert.doesNotMatch(readFileSync(codeHtml, 'utf8'), /TASK TEXT INJECTED/);
    const { page, problems, requests } = await openReport(browser, codeHtml, 1280);
    const asked = /^prompt = "(.*)"$/m.exec(readFileSync(join(bundledCodeSuitesDir(), 'smoke', 'async-map', 'task.toml'), 'utf8'))![1]!;
    await page.click('table.grid[data-grid="agents"] details.task-prompt summary');
    assert.equal(await page.textContent('table.grid[data-grid="agents"] details.task-prompt[open] pre.prompt'), asked);
    const notes = await page.$$eval('#code p[data-prompts]', (ps) => ps.map((x) => `${x.getAttribute('data-prompts')}: ${x.textContent ?? ''}`));
    assert.match(notes[0]!, /^shown: Each task opens its prompt, read from bundled suite "smoke"/);
    assert.match(notes[1]!, /^missing: Task prompts not shown: suite changed since the run: digest differs \(run [0-9a-f]{12}, .*tasks now [0-9a-f]{12}\)$/);
    assert.equal(await page.$$eval('table.grid[data-grid="agents-edited"] details', (d) => d.length), 0);
    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 900 });
      const m = await overflow(page);
      assert.ok(m.ok, `code page wider than ${width} px: ${JSON.stringify(m)}`);
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(requests, []);
    await page.close();
  });
});
