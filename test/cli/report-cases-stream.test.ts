import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeOutputFile } from '../../src/cli/output-file.js';
import { casesCsv } from '../../src/report/csv.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { readResultsFile } from '../../src/runner/results-stream.js';
import { run } from '../../src/runner/run.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cases-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const results = join(dir, 'big.results.jsonl');

before(async () => {
  // 1,200 scored cases: more than one batch of rows (1,024) on the way out.
  const sink = new JsonlResultsFile(results);
  await run({ suite: loadSuite('router'), target: createReferenceCascade(), sink, warmup: 1, repeats: 40, bootstrap: 0 });
  sink.close();
});

describe('report --cases writes rows as it reads them', () => {
  it('writes the same CSV and JSONL as rendering every case held in memory', async () => {
    const scored = readResultsFile(results).results.filter((r) => r.phase === 'scored');
    assert.equal(scored.length, 1200);
    const csv = join(dir, 'out', 'cases.csv');
    const r = await cli(['report', results, '--cases', '-o', csv]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(csv, 'utf8'), casesCsv([{ label: 'big', results: scored }]));
    const jsonl = join(dir, 'out', 'cases.jsonl');
    const j = await cli(['report', results, '--cases', '-o', jsonl]);
    assert.equal(j.code, 0, j.stderr);
    assert.equal(readFileSync(jsonl, 'utf8'), scored.map((c) => JSON.stringify({ run: 'big', kind: 'suite', ...c }) + '\n').join(''));
    // Nothing is left beside the output.
    assert.deepEqual(readdirSync(join(dir, 'out')).sort(), ['cases.csv', 'cases.jsonl']);
  });

  it('run -o FILE.csv / .jsonl writes its scored cases as the results file is read back, the same bytes as before', async () => {
    for (const ext of ['csv', 'jsonl']) {
      const out = join(dir, 'run', `r.${ext}`);
      const r = await cli(['run', '-s', 'router', '-q', '--no-history', '--repeat', '40', '--bootstrap', '0', '-o', out]);
      assert.equal(r.code, 0, r.stderr);
      const scored = readResultsFile(join(dir, 'run', 'r.results.jsonl')).results.filter((c) => c.phase === 'scored');
      assert.equal(scored.length, 1200);
      const expected = ext === 'csv' ? casesCsv([{ label: 'router', results: scored }]) : scored.map((c) => JSON.stringify(c) + '\n').join('');
      assert.equal(readFileSync(out, 'utf8'), expected, ext);
    }
  });

  it('leaves an existing output as it was when the rows fail half-way, with no partial file beside it', () => {
    const out = join(dir, 'keep', 'rows.csv');
    writeOutputFile(out, 'the old rows\n');
    assert.throws(
      () =>
        writeOutputFile(out, {
          stream: (write) => {
            for (let i = 0; i < 5000; i++) write(`${'x'.repeat(400)}\n`); // past the 1 MiB that is written at a time
            throw new Error('results file changed');
          },
        }),
      /results file changed/,
    );
    assert.equal(readFileSync(out, 'utf8'), 'the old rows\n');
    assert.deepEqual(readdirSync(join(dir, 'keep')), ['rows.csv']);
    // A device is written directly (nothing can be renamed onto it).
    writeOutputFile('/dev/null', { stream: (write) => write('rows\n') });
    assert.ok(!existsSync('/dev/null.partial-' + process.pid));
  });
});
