import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { heapFlags, NEW_SPACE_CAP } from '../../src/cli/heap-flags.js';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-heap-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The CLI caps V8's young generation (src/cli/heap-flags.ts, heap-setup.ts). Left to grow, a run of 20,000 cases
// took it to two 8 MiB semi-spaces, a million cases to two of 16 MiB.
describe('CLI: the young generation stays at its cap through a long run', () => {
  const suite = join(dir, 'suite.jsonl');
  writeFileSync(suite, Array.from({ length: 20_000 }, (_, i) => `{"id":"c${i}","prompt":"what is ${i}?","expected":"what is ${i}?"}\n`).join(''));
  const out = join(dir, 'new-space.txt');
  const probe = join(dir, 'probe.mjs');
  // Samples the new space's capacity while the run's loop yields, and once more at exit.
  writeFileSync(
    probe,
    `import { getHeapSpaceStatistics } from 'node:v8';
import { writeFileSync } from 'node:fs';
let max = 0;
const sample = () => { const s = getHeapSpaceStatistics().find((x) => x.space_name === 'new_space'); if (s && s.space_size > max) max = s.space_size; };
setInterval(sample, 5).unref();
process.on('exit', () => { sample(); writeFileSync(${JSON.stringify(out)}, String(max)); });
`,
  );
  /** The most new space a 20,000-case echo run held, bytes. */
  async function newSpaceOfRun(nodeOptions = ''): Promise<number> {
    const r = await cli(['run', '-q', '--no-history', '--target', 'echo', '--warmup', '0', '--bootstrap', '0', '--overwrite', '--suite', suite, '-o', join(dir, 'r.json')], {
      env: { NODE_OPTIONS: `${nodeOptions} --import=${pathToFileURL(probe).href}` },
    });
    assert.equal(r.code, 0, r.stderr);
    const max = Number(readFileSync(out, 'utf8'));
    assert.ok(max > 0, 'the probe sampled the new space');
    return max;
  }

  it('a 20,000-case echo run never holds more than 8 MiB of new space', async () => {
    const max = await newSpaceOfRun();
    assert.ok(max <= NEW_SPACE_CAP, `new space reached ${(max / 2 ** 20).toFixed(1)} MiB`);
  });

  it("a user's own --max-semi-space-size is left alone", async () => {
    const max = await newSpaceOfRun('--max-semi-space-size=16');
    assert.ok(max > NEW_SPACE_CAP, `new space reached only ${(max / 2 ** 20).toFixed(1)} MiB`);
  });
});

describe('heapFlags: what the CLI sets, and that a user who sized the heap keeps their sizes', () => {
  it('sets the growth factors by default', () => {
    assert.deepEqual(heapFlags([], undefined), ['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
    assert.deepEqual(heapFlags(['--enable-source-maps'], '--max-old-space-size=4096'), ['--semi-space-growth-factor=1', '--heap-growing-percent=50']);
  });
  it('sets nothing when the command line or NODE_OPTIONS sizes a generation', () => {
    for (const a of ['--max-semi-space-size=32', '--min_semi_space_size=4', '--semi-space-growth-factor=4', '--heap-growing-percent=100']) {
      assert.deepEqual(heapFlags([a], undefined), [], a);
      assert.deepEqual(heapFlags([], `--inspect ${a}`), [], `NODE_OPTIONS ${a}`);
    }
  });
});
