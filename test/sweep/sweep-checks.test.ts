import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-sweep-checks-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const suite = join(dir, 'two.json');
writeFileSync(suite, JSON.stringify({ name: 'two', cases: [{ id: 'a', prompt: 'x', expected: 'x' }, { id: 'b', prompt: 'y', expected: 'y' }] }));

describe('a sweep checks every arm before the first one runs', () => {
  const bad: [string, string, RegExp][] = [
    ['a meter that cannot read here', `meter: rapl\n    meter_options: { powercap_root: ${JSON.stringify(join(dir, 'no-powercap'))} }`, /arm b: meter rapl cannot read here/],
    ['a negative price', 'prices: { input_usd_per_mtok: -1, output_usd_per_mtok: 1 }', /arm b: prices\.input_usd_per_mtok must be >= 0/],
    ['concurrency 2^31', 'concurrency: 2147483648', /arms\.1\.concurrency must be <= 4096/],
    ['repeat over 10^6', 'repeat: 1000001', /arms\.1\.repeat must be <= 1000000/],
  ];
  for (const [what, setting, message] of bad) {
    it(`second arm with ${what}: one line naming the plan and the key, exit 2, nothing written`, async () => {
      const slug = what.replace(/\W+/g, '-');
      const plan = join(dir, `${slug}.yaml`);
      writeFileSync(plan, `name: p\nsuites: [${JSON.stringify(suite)}]\narms:\n  - name: a\n    kind: echo\n  - name: b\n    kind: echo\n    ${setting}\n`);
      const out = join(dir, `out-${slug}`);
      const r = await cli(['sweep', plan, '--out-dir', out, '--no-history', '--no-idle', '-q']);
      assert.equal(r.code, 2, r.stderr);
      const lines = r.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.ok(lines[0]!.includes(plan), r.stderr);
      assert.match(lines[0]!, message);
      assert.ok(!existsSync(out) || readdirSync(out).length === 0, `the first arm wrote ${existsSync(out) ? readdirSync(out).join(', ') : ''}`);
    });
  }

  it('run takes the same bounds as a plan arm', async () => {
    for (const [flag, value] of [['--concurrency', '4097'], ['--repeat', '1000001']]) {
      const r = await cli(['run', '-q', '--no-history', '--suite', suite, flag!, value!, '-o', join(dir, 'bounds.json')]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${flag}.*must be <= `));
    }
  });
});
