import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { run } from '../../src/runner/run.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { streamResultsFile } from '../../src/runner/results-stream.js';
import { resultsFileState } from '../../src/runner/results-state.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-results-state-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What JSON-parsing every line says: the reference the byte-level reader must agree with. */
function parsedState(path: string) {
  let cases = 0;
  let ended = false;
  streamResultsFile(path, { header: () => {}, case: () => void cases++, other: (o) => void (ended ||= o.record === 'end') });
  return { cases, ended };
}

describe('resultsFileState', () => {
  it('counts case lines and finds the end record as parsing every line does, whole and cut short', async () => {
    const path = join(dir, 'r.jsonl');
    const sink = new JsonlResultsFile(path);
    await run({ suite: loadSuite('router'), target: createReferenceCascade(), sink, warmup: 1, repeats: 2, bootstrap: 0 });
    sink.close();
    const { readFileSync } = await import('node:fs');
    const lines = readFileSync(path, 'utf8').split('\n');
    for (const keep of [1, 2, 7, lines.length - 2, lines.length]) {
      const cut = join(dir, `cut-${keep}.jsonl`);
      writeFileSync(cut, lines.slice(0, keep).join('\n') + '\n');
      assert.deepEqual(resultsFileState(cut), parsedState(cut), `first ${keep} lines`);
    }
    const whole = resultsFileState(path);
    assert.equal(whole.ended, true);
    assert.ok(whole.cases > 40);
  });

  it('refuses what is not a results file, even lines shaped like case lines', () => {
    const cases: [string, RegExp][] = [
      ['my notes\n', /line 1: not valid JSON/],
      // A case-looking line before any header is parsed, and refused as parsing refuses it.
      ['{"record":"case","phase":"scored","pass":0,"index":0}\n', /a case line before the header/],
      ['{"record":"header","format":"joulebench-results/1"}\n{"record":"case",\n', /line 2: not valid JSON/],
      ['{"record":"header","format":"joulebench-results/1"}\n{"record":"nope"\n', /line 2: not valid JSON/],
      ['{"record":"header","format":"joulebench-results/1"}\n[1,2]\n', /line 2: not a joulebench results line/],
    ];
    for (const [text, message] of cases) {
      const p = join(dir, 'bad.jsonl');
      writeFileSync(p, text);
      assert.throws(() => resultsFileState(p), message, JSON.stringify(text));
    }
  });
});
