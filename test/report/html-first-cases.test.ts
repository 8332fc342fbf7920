import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildHtmlModel } from '../../src/report/html/model.js';
import { loadInputs } from '../../src/report/load-inputs.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { run } from '../../src/runner/run.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-html-first-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const WHEN = '2026-01-01T00:00:00.000Z';
let inOrder = '';
let shuffled = '';

before(async () => {
  inOrder = join(dir, 'a.results.jsonl');
  const sink = new JsonlResultsFile(inOrder);
  await run({ suite: loadSuite('router'), target: createReferenceCascade(), sink, repeats: 3, bootstrap: 0 });
  sink.close();
  // Some scored cases failed at the target (their latency is left out of the percentiles), and the
  // lines come in a concurrent run's order: what is kept is the first cases in file order.
  const lines = readFileSync(inOrder, 'utf8').trimEnd().split('\n');
  const head = lines.filter((l) => !l.includes('"record":"case"') && !l.includes('"record":"end"'));
  const cases = lines.filter((l) => l.includes('"record":"case"'));
  const failed = cases.map((l, i) => (i % 7 === 3 ? l.replace('"error":null', '"error":{"code":"E_TARGET","message":"boom"}') : l));
  for (let i = 0; i + 1 < failed.length; i += 3) [failed[i], failed[i + 1]] = [failed[i + 1]!, failed[i]!];
  shuffled = join(dir, 'b.results.jsonl');
  writeFileSync(shuffled, [head[0]!.replace('"concurrency":1', '"concurrency":4'), ...failed, ...lines.filter((l) => l.includes('"record":"end"'))].join('\n') + '\n');
});

describe('the HTML page reads only the cases it shows', () => {
  it('gives the same page data from the first cases as from every case, at any limit', () => {
    for (const file of [inOrder, shuffled]) {
      const whole = loadInputs([file], null, { cases: true });
      const total = whole[0]!.kind === 'suite' ? whole[0]!.results!.length : 0;
      assert.ok(total > 50, `${total} scored cases`);
      for (const limit of [0, 1, 17, total - 1, total, total + 5]) {
        const first = loadInputs([file], null, { cases: true, casesLimit: limit });
        const r = first[0]!;
        assert.equal(r.kind, 'suite');
        if (r.kind !== 'suite') continue;
        assert.equal(r.results!.length, Math.min(limit, total));
        assert.equal(r.scored_total, total);
        assert.deepEqual(buildHtmlModel(first, WHEN, limit), buildHtmlModel(whole, WHEN, limit), `${file}, limit ${limit}`);
      }
    }
  });

  it('leaves failed cases out of the latency percentiles, as the whole-case path does', () => {
    const r = loadInputs([shuffled], null, { cases: true, casesLimit: 3 })[0]!;
    assert.ok(r.kind === 'suite' && r.case_latency_ms && r.case_latency_ms.p95 !== null);
    const whole = buildHtmlModel(loadInputs([shuffled], null, { cases: true }), WHEN);
    assert.deepEqual(r.case_latency_ms, whole.runs[0]!.case_latency_ms);
  });
});
