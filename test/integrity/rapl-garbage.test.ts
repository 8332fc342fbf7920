import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Suite, Target } from '../../src/core/types.js';
import { createRaplMeter } from '../../src/meters/rapl/index.js';
import { run } from '../../src/runner/run.js';
import { setEnergy, writePowercapTree } from '../meters/powercap-tree.js';

const ZONES = [{ entry: 'intel-rapl:0', name: 'package-0', energy_uj: 1000, max_uj: 1_000_000 }];

function writeRaw(root: string, text: string): void {
  writeFileSync(join(root, 'intel-rapl:0', 'energy_uj'), text);
}

describe('rapl: a counter that reads garbage is unavailable, never 0 J', () => {
  for (const [what, text] of [
    ['empty', ''],
    ['text', 'garbage\n'],
    ['negative', '-5\n'],
    ['above max_energy_range_uj', '2000000\n'],
    ['a fraction', '12.5\n'],
  ] as const) {
    it(`probe: ${what} → unavailable with the reason`, async () => {
      const tree = writePowercapTree(ZONES);
      writeRaw(tree.root, text);
      const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
      try {
        const p = await meter.probe();
        assert.equal(p.available, false);
        assert.match(p.available ? '' : p.reason, /energy counter reads garbage: .*energy_uj/);
      } finally {
        await meter.close?.();
        tree.cleanup();
      }
    });
  }

  it('mid-run: a window over a garbage read is null with a warning, and the report has no total (not 0 J)', async () => {
    const tree = writePowercapTree(ZONES);
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
    try {
      assert.ok((await meter.probe()).available);
      const w = await meter.start();
      writeRaw(tree.root, 'garbage\n');
      const reading = await w.stop();
      assert.equal(reading.joules, null);
      assert.equal(reading.by_domain['package-0']?.joules, null);
      assert.ok(reading.warnings?.some((l) => /unknown \(null\)/.test(l)));
      // The counter comes back: a later window reads again.
      setEnergy(tree.root, 'intel-rapl:0', 5000);
      const w2 = await meter.start();
      setEnergy(tree.root, 'intel-rapl:0', 7000);
      assert.equal((await w2.stop()).joules, 0.002);
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });

  it('a run whose counter turns to garbage reports energy unknown, J/correct null', async () => {
    const tree = writePowercapTree(ZONES);
    const meter = createRaplMeter({ root: tree.root, poll_ms: 1_000_000 });
    const suite: Suite = {
      name: 's',
      version: '1',
      scorer: 'substring',
      source: 'test',
      cases: [0, 1].map((i) => ({ id: `c${i}`, prompt: 'p', expected: 'yes', dataset: 's', weight: 1, tags: [] })),
    };
    const target: Target = {
      id: 't',
      kind: 'test',
      answer: () => {
        writeRaw(tree.root, 'not a number\n');
        return { text: 'yes' };
      },
      describe: () => ({}),
    };
    try {
      const out = await run({ suite, target, meter, idle_ms: 0 });
      assert.equal(out.report.correct_count, 2);
      assert.equal(out.report.total_joules, null);
      assert.equal(out.report.joules_per_correct, null);
      assert.equal(out.report.gross_joules, null);
      assert.ok(out.results.every((r) => r.joules === null && r.energy_source === 'none'));
    } finally {
      await meter.close?.();
      tree.cleanup();
    }
  });
});
