import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BIN } from '../helpers/cli.js';

/** util-linux `script` gives the CLI a real pseudo-terminal, as a person's shell would. */
const hasScript = spawnSync('script', ['--version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'jb-tty-'));

function inTerminal(args: string): string {
  return execFileSync('script', ['-qec', `${process.execPath} ${BIN} ${args}`, '/dev/null'], {
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
  });
}

describe('progress bar', { skip: hasScript ? false : 'util-linux script is not installed' }, () => {
  it('is drawn on stderr when it is a terminal', () => {
    const out = inTerminal(`run -s router --out ${join(dir, 'a.json')}`);
    assert.match(out, /joulebench [█░]+ \d+\/60 cases/);
  });
  it('is not drawn with --quiet', () => {
    const out = inTerminal(`run -s router --quiet --out ${join(dir, 'b.json')}`);
    assert.doesNotMatch(out, /[█░]/);
  });
});
