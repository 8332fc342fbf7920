import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { buildHtmlModel } from '../../src/report/html/model.js';
import { renderHtmlPage } from '../../src/report/html/page.js';
import { renderReportMarkdown } from '../../src/report/markdown.js';
import { renderReportTable } from '../../src/report/table.js';
import { CTX, result } from '../helpers/results.js';

const endpoint = aggregate([result({ stage: 'neural' }), result({ index: 1, stage: 'neural' })], { ...CTX, target: 'openai:gpt-x' });
const cascade = aggregate([result({ stage: 'cache' }), result({ index: 1, stage: 'neural' })], { ...CTX, target: 'cascade:reference+echo' });
const html = (r: typeof endpoint): string =>
  renderHtmlPage(buildHtmlModel([{ label: 'a', origin: 'a.json', report: r, results: null, receipt: null, run_id: null }], '2026-01-01T00:00:00.000Z'), '/* echarts */');

describe('stage tables only where there are stages', () => {
  it('an endpoint (not a cascade): no cache/kv/graph rows in the table, Markdown or HTML; the JSON keeps the seed map, all at neural', () => {
    assert.deepEqual(endpoint.stage_distribution, { cache: 0, kv: 0, graph: 0, neural: 2 });
    assert.doesNotMatch(renderReportTable(endpoint), /^\s*(stage|cache|kv|graph)\s/m);
    assert.doesNotMatch(renderReportMarkdown(endpoint), /\| (stage|cache|kv|graph) \|/);
    assert.doesNotMatch(html(endpoint), /id="stages"|<h2>Stage distribution/);
    assert.match(html(endpoint), /id="latency"/, 'the rest of the page stays');
  });
  it('a cascade keeps its stage table everywhere', () => {
    assert.match(renderReportTable(cascade), /^\s*cache\s+1\s/m);
    assert.match(renderReportMarkdown(cascade), /\| cache \|/);
    assert.match(html(cascade), /id="stages"/);
  });
});
