import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, describe, it } from 'node:test';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { rebuildReport } from '../../src/report/rebuild.js';
import { JsonlResultsFile } from '../../src/runner/results-file.js';
import { run } from '../../src/runner/run.js';
import { loadSuite } from '../../src/suites/loader.js';
import { createReferenceCascade } from '../../src/targets/cascade/reference.js';
import { jb } from '../cli/helpers.js';
import { writePowercapTree } from '../meters/powercap-tree.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-run-measures-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** JSON as a report file holds it (a round trip drops undefined keys). */
const asJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

describe('run_measures: report FILE gives a metered run its own report', () => {
  it('a RAPL run: the idle calibration, the suite window and the wall time come back from the file', async () => {
    // A package drawing 40 W since t0, read at read time, so every window reads a known, nonzero energy.
    const tree = writePowercapTree([{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 0 }]);
    const t0 = performance.now();
    const read = (path: string): string => (path.endsWith('energy_uj') ? `${Math.round((performance.now() - t0) * 40 * 1000)}\n` : readFileSync(path, 'utf8'));
    const meter = createRaplMeter({ root: tree.root, read });
    const path = join(dir, 'rapl.results.jsonl');
    const sink = new JsonlResultsFile(path);
    try {
      const out = await run({ suite: loadSuite('router'), target: createReferenceCascade(), meter, sink, warmup: 0, idle_ms: 50, concurrency: 4, bootstrap: 50 });
      sink.close();
      // The run measured what no case line holds: idle watts, the suite window as the total, the throughput.
      assert.equal(out.report.idle, 'measured');
      assert.equal(out.report.energy_basis, 'suite_window');
      assert.ok(out.report.gross_joules !== null && out.report.throughput !== null);
      assert.deepEqual(asJson(rebuildReport(path).report), asJson(out.report));
      // A file from before this line existed (or cut before it): the figures it never held are missing, not made up.
      const lines = readFileSync(path, 'utf8').trim().split('\n');
      const older = join(dir, 'older.results.jsonl');
      writeFileSync(older, lines.filter((l) => !l.startsWith('{"record":"run_measures"')).join('\n') + '\n');
      const without = rebuildReport(older).report;
      assert.equal(without.idle, 'skipped');
      assert.equal(without.gross_joules, null);
      assert.equal(without.throughput, null);
      // A tampered line is one line naming the file and the key, exit 2.
      const at = lines.findIndex((l) => l.startsWith('{"record":"run_measures"'));
      const line = JSON.parse(lines[at]!) as Record<string, unknown>;
      for (const [patch, message] of [
        [{ idle: { status: 'warm', watts: 1 } }, /run_measures line's idle\.status is not one of/],
        [{ idle: { status: 'measured', watts: '12' } }, /idle\.watts is neither null nor a finite number/],
        [{ suite: { joules: '9', source: 'rapl', window_ms: 5, below_floor: false } }, /suite\.joules is neither null nor a finite number/],
        [{ scored_wall_ms: 'fast' }, /scored_wall_ms is neither null nor a finite number/],
      ] as const) {
        const bad = join(dir, 'bad.results.jsonl');
        writeFileSync(bad, [...lines.slice(0, at), JSON.stringify({ ...line, ...patch }), ...lines.slice(at + 1)].join('\n') + '\n');
        const r = jb(['report', '--json', bad], { home: join(dir, 'home') });
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, message);
      }
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });
});
