import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { jb } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-cli-dup-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');

it('a case line written twice is refused the same way by report, compare, frontier, run --resume and rescore: exit 2, both lines named', () => {
  const whole = join(dir, 'whole.results.jsonl');
  assert.equal(jb(['run', '-q', '--no-history', '--suite', 'router', '--results', whole, '--out', join(dir, 'whole.json')], { home }).code, 0);
  const lines = readFileSync(whole, 'utf8').trimEnd().split('\n');
  const at = lines.findIndex((l) => l.includes('"phase":"scored"'));
  const key = JSON.parse(lines[at]!) as { pass: number; index: number };
  // The scored line again, further on (files joined or edited): a finished file, and one without its end line (for --resume).
  const dup = join(dir, 'dup.results.jsonl');
  const withDup = [...lines.slice(0, at + 3), lines[at]!.replace(/"latency_ms":[\d.]+/, '"latency_ms":1.5'), ...lines.slice(at + 3)];
  writeFileSync(dup, withDup.join('\n') + '\n');
  const unfinished = join(dir, 'dup-unfinished.results.jsonl');
  writeFileSync(unfinished, withDup.filter((l) => !l.includes('"record":"end"') && !l.includes('"record":"run_measures"')).join('\n') + '\n');
  const judge = join(dir, 'judge.yaml');
  writeFileSync(judge, 'judge:\n  kind: openai\n  endpoint: http://127.0.0.1:9/v1\n  model: j\n');

  const refusal = (file: string) => new RegExp(`^joulebench: .*${file}:${at + 1} and .*${file}:${at + 4}: two case lines for scored pass ${key.pass} index ${key.index}`);
  const runs: [string, string[], string][] = [
    ['report', ['report', '--json', dup], 'dup\\.results\\.jsonl'],
    ['report --cases', ['report', dup, '--cases', '-o', join(dir, 'cases.csv')], 'dup\\.results\\.jsonl'],
    ['compare', ['compare', '-q', whole, dup], 'dup\\.results\\.jsonl'],
    ['frontier', ['frontier', whole, dup], 'dup\\.results\\.jsonl'],
    ['run --resume', ['run', '-q', '--no-history', '--suite', 'router', '--resume', unfinished, '--out', join(dir, 'resumed.json')], 'dup-unfinished\\.results\\.jsonl'],
    ['rescore', ['rescore', dup, '--judge', judge, '-q'], 'dup\\.results\\.jsonl'],
  ];
  for (const [name, args, file] of runs) {
    const r = jb(args, { home });
    assert.equal(r.code, 2, `${name}: ${r.stderr}`);
    assert.match(r.stderr, refusal(file), name);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: ${r.stderr}`);
  }
  // The file as written, once each: read without a word.
  const ok = jb(['report', '--json', whole], { home });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stderr, '');
});
