import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { loadInputs } from '../../src/report/load-inputs.js';
import { jb } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-inputs-header-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('a report JSON whose results file has a bad header key is refused however many of its cases are kept', () => {
  assert.equal(jb(['run', '-q', '--no-history', '--suite', 'router', '--limit', '3', '-o', join(dir, 'a.json')], { home: join(dir, 'home') }).code, 0);
  const results = join(dir, 'a.results.jsonl');
  writeFileSync(results, readFileSync(results, 'utf8').replace('"prompts":"index"', '"prompts":"all"'));
  const refusal = { message: /a\.results\.jsonl: line 1: header key prompts must be "text", "index" or "none"/ };
  // Every case (the viewer's compare page, the library's default) and the first cases (the HTML page).
  for (const opts of [{}, { cases: true, casesLimit: 2 }]) assert.throws(() => loadInputs([join(dir, 'a.json')], null, opts), refusal, JSON.stringify(opts));
});
