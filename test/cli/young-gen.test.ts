import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cli } from '../helpers/cli.js';

/** src/cli/young-gen.ts's NEW_SPACE_CAP (not imported: it sets the flags of the process that imports it). */
const NEW_SPACE_CAP = 8 * 2 ** 20;
const dir = mkdtempSync(join(tmpdir(), 'jb-young-gen-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The CLI caps V8's young generation (src/cli/young-gen.ts). Left to grow, a run of 20,000 cases
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
