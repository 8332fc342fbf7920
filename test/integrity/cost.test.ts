import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import { renderReportTable } from '../../src/report/table.js';
import { cli } from '../helpers/cli.js';
import { startFakeOpenAI, type FakeServer } from '../helpers/fake-openai.js';
import { CTX, result } from '../helpers/results.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cost-'));
let server: FakeServer;
before(async () => {
  server = await startFakeOpenAI(() => ({ kind: 'stream', text: 'Paris', usage: { prompt_tokens: 10, completion_tokens: 2 } }));
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('cost is never silently absent', () => {
  it('tokens with no price: cost_unknown_count counts them even when no case had a cost', () => {
    const r = aggregate([result({ prompt_tokens: 10, completion_tokens: 2 }), result({ index: 1, prompt_tokens: 3, completion_tokens: 1 })], CTX);
    assert.equal(r.total_usd, null);
    assert.equal(r.cost_unknown_count, 2);
    assert.match(renderReportTable(r), /cost\s+n\/a\s+unknown for 2 case/);
  });

  it('--suite router --target openai with no prices: one warning line on stderr, cost_unknown_count = the cases', async () => {
    const out = join(dir, 'noprice.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '-o', out, '--no-history', '--meter', 'model']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { total_usd: number | null; cost_unknown_count: number; case_count: number };
    assert.equal(report.total_usd, null);
    assert.equal(report.cost_unknown_count, report.case_count);
    assert.equal(report.case_count, 30);
    const warnings = r.stderr.split('\n').filter((l) => /cost unknown/.test(l));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0]!, /^joulebench: warning: cost unknown for 30 of 30 case\(s\) of openai:m: .*prices\.input_usd_per_mtok/);
    assert.match(r.stdout, /cost\s+n\/a/);
  });

  it('a free model (price 0 given) shows $0.00 and no warning', async () => {
    const cfg = join(dir, 'free.yaml');
    writeFileSync(cfg, 'prices:\n  input_usd_per_mtok: 0\n  output_usd_per_mtok: 0\n');
    const out = join(dir, 'free.json');
    const r = await cli(['run', '--suite', 'router', '--target', 'openai', '--endpoint', server.url, '--model', 'm', '-c', cfg, '-o', out, '--no-history', '--meter', 'model']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { total_usd: number | null; cost_unknown_count: number };
    assert.equal(report.total_usd, 0);
    assert.equal(report.cost_unknown_count, 0);
    assert.doesNotMatch(r.stderr, /cost unknown/);
    assert.match(r.stdout, /cost\s+\$0\.00/);
  });
});
