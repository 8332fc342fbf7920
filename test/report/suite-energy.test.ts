import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { historyKind } from '../../src/report/history.js';
import { suiteEnergyText } from '../../src/report/suite-energy.js';
import { CTX, result } from '../helpers/results.js';

describe('whole-suite energy text', () => {
  it('gross with its source, net, idle watts, and the unknown-energy count', () => {
    const r = aggregate([result({ joules: 1, energy_source: 'rapl' }), result({ joules: null, energy_source: 'none', passed: false })], {
      ...CTX,
      energy: {
        idle: { status: 'measured', watts: 2, by_domain_watts: {}, window_ms: 500, source: 'rapl' },
        suite: { joules: 10, source: 'rapl', by_domain: {}, window_ms: 1500, below_floor: false },
      },
    });
    const t = suiteEnergyText(r);
    assert.equal(t.gross, 'gross 10.00 J [rapl]');
    assert.equal(t.net, 'net 7.00 J', '10 J − 2 W × 1.5 s');
    assert.equal(t.idle, 'idle 2.00 W');
    assert.equal(t.unknown, 'energy unknown for 1 case');
  });

  it('says n/a with the reason when idle is unknown, and for an older report without the fields', () => {
    const r = aggregate([result({ joules: 1, energy_source: 'rapl' })], {
      ...CTX,
      energy: {
        idle: { status: 'unusable', watts: null, by_domain_watts: {}, window_ms: null, source: 'rapl', reason: 'x' },
        suite: { joules: 4, source: 'rapl', by_domain: {}, window_ms: 100, below_floor: false },
      },
    });
    assert.equal(suiteEnergyText(r).net, 'net n/a (idle power unknown)');
    assert.equal(suiteEnergyText(r).idle, 'idle n/a');
    assert.equal(suiteEnergyText(r).unknown, null, 'every case has energy');
    const old = suiteEnergyText({ case_count: 1, correct_count: 1 });
    assert.match(old.gross, /^gross n\/a \(report predates/);
    assert.equal(old.unknown, null);
  });

  it('history kinds come from the stored format', () => {
    assert.equal(historyKind('joulebench-report/1'), 'suite');
    assert.equal(historyKind('joulebench-code-results/1'), 'code');
    assert.equal(historyKind('joulebench-infer/1'), 'infer');
    assert.equal(historyKind('something/9'), 'something/9');
  });
});

describe('net below idle is not "idle unknown"', () => {
  const below = () =>
    aggregate([result({ joules: 1, energy_source: 'rapl' })], {
      ...CTX,
      energy: {
        idle: { status: 'measured', watts: 50, by_domain_watts: {}, window_ms: 500, source: 'rapl' },
        suite: { joules: 4, source: 'rapl', by_domain: {}, window_ms: 1000, below_floor: false },
      },
    });
  it('the text names net below idle with the known idle power', () => {
    const r = below();
    assert.equal(r.net_below_idle, true);
    const t = suiteEnergyText(r);
    assert.match(t.net, /net below idle: gross < idle 50 W × 1000 ms/);
    assert.doesNotMatch(t.net, /idle power unknown/);
  });
  it('Markdown and HTML carry the same reason', async () => {
    const { renderReportMarkdown } = await import('../../src/report/markdown.js');
    const { buildHtmlModel, renderHtmlPage } = await import('../../src/report/html/index.js');
    const r = below();
    const md = renderReportMarkdown(r);
    assert.match(md, /net below idle/);
    assert.doesNotMatch(md, /idle power unknown/);
    const html = renderHtmlPage(buildHtmlModel([{ label: 'x', origin: 'x', report: r, results: null, receipt: null, run_id: null }], '2026-01-01T00:00:00Z'), '');
    assert.match(html, /net below idle/);
    assert.doesNotMatch(html, /idle power unknown/);
  });
});
