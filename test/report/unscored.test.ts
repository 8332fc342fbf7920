import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Case, Suite } from '../../src/core/types.js';
import { stripColors } from '../../src/report/colors.js';
import { buildHtmlReport } from '../../src/report/html/index.js';
import { renderReportMarkdown } from '../../src/report/markdown.js';
import { renderReportTable } from '../../src/report/table.js';
import { run } from '../../src/runner/run.js';
import { createReplayTarget } from '../../src/targets/replay.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-unscored-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// MT-Bench's shape without a judge: 4 cases with an answer to check, 8 with none (expected null).
const cases: Case[] = Array.from({ length: 12 }, (_, i) => ({ id: `q${i}`, prompt: `Question ${i}?`, expected: i < 4 ? `a${i}` : null, dataset: 'mt', weight: 1, tags: [] }));
const suite: Suite = { name: 'mt', version: '1', scorer: 'substring', cases, source: 'test' };

describe('unscored cases stand beside accuracy', () => {
  it('JSON unscored_count, and the terminal, markdown and HTML headlines', async () => {
    const answers = join(dir, 'answers.jsonl');
    writeFileSync(answers, cases.map((c, i) => JSON.stringify({ id: c.id, answer: `a${i}` })).join('\n') + '\n');
    const { report } = await run({ suite, target: createReplayTarget(answers), idle_ms: 0 });
    assert.equal(report.accuracy_pct, 100);
    assert.deepEqual([report.correct_count, report.scored_count, report.unscored_count, report.case_count], [4, 4, 8, 12]);
    assert.match(stripColors(renderReportTable(report)), /accuracy\s+100\.0 %\s+4\/4 scored cases correct, 8 unscored/);
    assert.match(renderReportMarkdown(report), /\| accuracy \| 100\.0 % \| 4\/4 scored cases correct, 8 unscored \|/);
    const html = buildHtmlReport([{ label: 'mt', origin: 'test', report, results: null, receipt: null, run_id: null }], new Date(0));
    assert.match(html, /4\/4 scored correct, <span class="warn">8 unscored<\/span>/);
  });

  it('a report written without unscored_count shows case_count − scored_count; none unscored shows nothing', async () => {
    const answers = join(dir, 'answers2.jsonl');
    writeFileSync(answers, cases.map((c, i) => JSON.stringify({ id: c.id, answer: `a${i}` })).join('\n') + '\n');
    const { report } = await run({ suite, target: createReplayTarget(answers), idle_ms: 0 });
    const older = { ...report } as Partial<typeof report>;
    delete older.unscored_count;
    assert.match(stripColors(renderReportTable(older as typeof report)), /4\/4 scored cases correct, 8 unscored/);
    const allScored = await run({ suite: { ...suite, cases: cases.slice(0, 4) }, target: createReplayTarget(answers), idle_ms: 0 });
    assert.equal(allScored.report.unscored_count, 0);
    assert.doesNotMatch(stripColors(renderReportTable(allScored.report)), /unscored/);
  });

  it('a report file without the TTFT and cost fields (hand-written, or from an older version) prints no "undefined"', async () => {
    const answers = join(dir, 'answers3.jsonl');
    writeFileSync(answers, cases.map((c, i) => JSON.stringify({ id: c.id, answer: `a${i}` })).join('\n') + '\n');
    const { report } = await run({ suite, target: createReplayTarget(answers), idle_ms: 0 });
    const sparse = { ...report } as Partial<typeof report>;
    for (const k of ['ttft_p50_ms', 'ttft_p95_ms', 'total_usd', 'usd_per_correct'] as const) delete sparse[k];
    for (const text of [stripColors(renderReportTable(sparse as typeof report)), renderReportMarkdown(sparse as typeof report)]) {
      assert.doesNotMatch(text, /undefined/);
      assert.doesNotMatch(text, /TTFT/);
    }
  });
});
