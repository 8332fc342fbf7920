import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jb } from '../cli/helpers.js';

/**
 * A real run's results file, edited by hand the way a person or another tool might, read back by
 * `report` (the streamed rebuild): every edit the results parser refuses is refused the same way
 * there, one line naming the file and the line, exit 2.
 */
const dir = mkdtempSync(join(tmpdir(), 'jb-stream-edits-'));
const home = join(dir, 'home');
after(() => rmSync(dir, { recursive: true, force: true }));
const p = (f: string): string => join(dir, f);
let text = '';

before(() => {
  const r = jb(['run', '-q', '--no-history', '--suite', 'router', '--meter', 'model', '-o', p('run.json')], { home });
  assert.equal(r.code, 0, r.stderr);
  text = readFileSync(p('run.results.jsonl'), 'utf8');
});

function refused(name: string, edited: string, message: RegExp): void {
  assert.notEqual(edited, text, `${name}: the edit changed nothing`);
  const path = p(`${name}.results.jsonl`);
  writeFileSync(path, edited);
  const out = jb(['report', '--json', path], { home });
  assert.equal(out.code, 2, `${name}: exit ${out.code}\n${out.stdout.slice(0, 200)}`);
  assert.match(out.stderr, message, name);
  assert.ok(out.stderr.includes(path), `${name}: ${out.stderr}`);
}

describe('report of a hand-edited results file: the fast path refuses what the parser refuses', () => {
  it('a trace entry whose hit is null', () => {
    refused('hit-null', text.replace('"hit":false', '"hit":null'), /line 2 \(case "[^"]+"\): trace is .*not a list of \{stage, hit, energy_uj\}/);
  });
  it('a by_domain that is not an object', () => {
    refused('by-domain', text.replace(',"error":null,"trace":', ',"error":null,"by_domain":5,"trace":'), /line 2 \(case "[^"]+"\): by_domain is 5, not an object/);
  });
});

describe('report of a results file holding a case the run could not have had', () => {
  // As the encoder writes them and re-spaced.
  const edit = (from: string, to: string, spaced: boolean): string => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes('"phase":"scored"') && l.includes(from));
    assert.ok(at > 0, from);
    const line = lines[at]!.replace(from, to);
    lines[at] = spaced ? JSON.stringify(JSON.parse(line), null, 1).replace(/\n/g, ' ') : line;
    return lines.join('\n');
  };
  for (const spaced of [false, true]) {
    it(`a scored line of a pass past the header's repeats${spaced ? ' (re-spaced)' : ''}`, () => {
      refused(`pass-past${spaced ? '-s' : ''}`, edit('"pass":0,"index":3,', '"pass":4,"index":3,', spaced), /line 35: a scored case line of pass 4, index 3, which the run could not have had \(its header says repeats 1: passes 0 to 0\)/);
    });
    it(`an index past the header's cases${spaced ? ' (re-spaced)' : ''}`, () => {
      refused(`index-past${spaced ? '-s' : ''}`, edit('"pass":0,"index":3,', '"pass":0,"index":30,', spaced), /line 35: a scored case line of pass 0, index 30, which the run could not have had \(its header says cases 30: index 0 to 29\)/);
    });
    it(`a negative index${spaced ? ' (re-spaced)' : ''}`, () => {
      refused(`negative${spaced ? '-s' : ''}`, edit('"pass":0,"index":3,', '"pass":0,"index":-3,', spaced), /line 35: a scored case line of pass 0, index -3, which the run could not have had \(pass and index count from 0\)/);
    });
  }
});
