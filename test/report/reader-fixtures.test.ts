import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { prettyJson } from '../../src/core/canonical.js';
import { resultsFileWarnings } from '../../src/report/inputs.js';
import { rebuildReport } from '../../src/report/rebuild.js';

/**
 * Results files (in case order, a concurrent run's order, lines far out of place, a BOM and a cut-off
 * last line, CRLF, hand-edited and blank lines, modelled energy with ranges, meta on every line) and
 * the report each gave when they were written: the reader must keep giving those bytes.
 */
const dir = fileURLToPath(new URL('./fixtures/reader/', import.meta.url));
const names = readdirSync(dir).filter((f) => f.endsWith('.results.jsonl')).map((f) => f.slice(0, -'.results.jsonl'.length));

describe('rebuildReport: the same report bytes as the fixtures were written with', () => {
  it('has fixtures to read', () => assert.ok(names.length >= 8, names.join(' ')));
  for (const name of names) {
    it(name, () => {
      const path = join(dir, `${name}.results.jsonl`);
      const expected = readFileSync(join(dir, `${name}.expected.json`), 'utf8');
      for (const chunkBytes of [97, 1 << 16]) {
        const r = rebuildReport(path, { chunkBytes });
        const paired = rebuildReport(path, { keep: 'paired', chunkBytes }).paired!;
        const got = prettyJson({ report: r.report, warnings: resultsFileWarnings(`${name}.results.jsonl`, r), paired_cases: paired.length });
        assert.equal(got, expected, `${name}, chunk ${chunkBytes}`);
        assert.equal(prettyJson(rebuildReport(path, { keep: 'scored', chunkBytes }).report), prettyJson(r.report), `${name}, keep scored`);
      }
    });
  }
});
