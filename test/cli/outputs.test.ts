import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jb } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-outputs-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const home = join(dir, 'home');
const p = (f: string): string => join(dir, f);
const run = (args: string[], cwd = dir, env?: NodeJS.ProcessEnv) => jb(args, { home, cwd, ...(env ? { env } : {}) });

/** A small RFC 4180 reader for the tests: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field), rows.push(row), (row = []), (field = ''), i++;
    } else field += ch;
  }
  if (field !== '' || row.length) row.push(field), rows.push(row);
  return rows;
}

// A suite whose answers hold a comma, quotes and a line break: the echo backend answers with the prompt.
const suiteFile = p('tricky.json');
writeFileSync(
  suiteFile,
  JSON.stringify({
    name: 'tricky',
    cases: [
      { id: 'q1', prompt: 'say "a, b"\nthen stop', expected: 'a, b', tags: ['quotes'] },
      { id: 'q2', prompt: 'plain', expected: 'nothing-like-this', tags: ['plain'] },
      { id: 'q3', prompt: 'third', expected: null, tags: ['plain'] },
    ],
  }),
);

describe('-o FILE writes the format its extension names', () => {
  before(() => mkdirSync(p('out'), { recursive: true }));

  it('run: .json .md .html .csv .jsonl .txt', () => {
    for (const ext of ['json', 'md', 'html', 'csv', 'jsonl', 'txt']) {
      const r = run(['run', '-q', '--no-history', '-s', suiteFile, '-o', p(`out/r.${ext}`)]);
      assert.equal(r.code, 0, `${ext}: ${r.stderr}`);
    }
    const report = JSON.parse(readFileSync(p('out/r.json'), 'utf8')) as { case_count: number };
    assert.equal(report.case_count, 3);
    assert.match(readFileSync(p('out/r.md'), 'utf8'), /^#.*\n[\s\S]*\| accuracy/m);
    assert.match(readFileSync(p('out/r.html'), 'utf8'), /^<!doctype html>/i);
    assert.match(readFileSync(p('out/r.txt'), 'utf8'), /accuracy +\d/);
    assert.doesNotMatch(readFileSync(p('out/r.txt'), 'utf8'), /\x1b\[/, 'no colour codes in a file');
    const lines = readFileSync(p('out/r.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { case_id: string; phase: string });
    assert.deepEqual(lines.map((l) => l.case_id), ['q1', 'q2', 'q3']);
    assert.ok(lines.every((l) => l.phase === 'scored'), 'warmup passes are not in the per-case output');
    // Side files are named after the output whatever its extension.
    assert.ok(existsSync(p('out/r.results.jsonl')) && existsSync(p('out/r.receipt.json')));
  });

  it('run -o .csv: a header row, CRLF records, RFC 4180 quoting (comma, quote, line break)', () => {
    const text = readFileSync(p('out/r.csv'), 'utf8');
    assert.ok(text.includes('\r\n'), 'CRLF line ends');
    const rows = parseCsv(text);
    const head = rows[0]!;
    assert.deepEqual(head.slice(0, 6), ['run', 'phase', 'pass', 'index', 'case_id', 'dataset']);
    assert.equal(rows.length, 4, 'header + 3 cases');
    const q1 = rows[1]!;
    assert.equal(q1[head.indexOf('case_id')], 'q1');
    assert.match(q1[head.indexOf('response')]!, /say "a, b"\nthen stop/, 'the field survives the round trip');
    assert.equal(q1[head.indexOf('expected')], 'a, b');
    assert.equal(rows[3]![head.indexOf('passed')], '', 'an unscored case: empty, not false');
  });

  it('report, compare, frontier, code --report and infer --report write by extension', () => {
    const a = p('out/r.json');
    assert.equal(run(['run', '-q', '--no-history', '-s', suiteFile, '--warmup', '0', '-o', p('out/b.json')]).code, 0);
    const b = p('out/b.json');
    for (const ext of ['json', 'md', 'html', 'csv', 'jsonl', 'txt']) {
      const r = run(['report', a, b, '-o', p(`out/rep.${ext}`)]);
      assert.equal(r.code, 0, `report ${ext}: ${r.stderr}`);
    }
    const arms = parseCsv(readFileSync(p('out/rep.csv'), 'utf8'));
    assert.equal(arms[0]![0], 'arm');
    assert.deepEqual(arms.slice(1).map((x) => x[0]), ['r', 'b']);
    const cases = run(['report', a, b, '--cases', '-o', p('out/cases.csv')]);
    assert.equal(cases.code, 0, cases.stderr);
    assert.equal(parseCsv(readFileSync(p('out/cases.csv'), 'utf8')).length, 1 + 6);
    for (const ext of ['json', 'md', 'csv', 'jsonl', 'txt']) {
      assert.equal(run(['compare', a, b, '-q', '-o', p(`out/cmp.${ext}`)]).code, 0, `compare ${ext}`);
      assert.equal(run(['frontier', a, b, '-o', p(`out/fr.${ext}`)]).code, 0, `frontier ${ext}`);
    }
    const cmp = parseCsv(readFileSync(p('out/cmp.csv'), 'utf8'));
    assert.deepEqual(cmp[0], ['metric', 'baseline', 'candidate', 'change', 'change_unit']);
    assert.equal(cmp[1]![0], 'joules_per_correct');
    assert.match(readFileSync(p('out/cmp.md'), 'utf8'), /\|/);
    const fr = parseCsv(readFileSync(p('out/fr.csv'), 'utf8'));
    assert.ok(fr[0]!.includes('energy_frontier'));
    assert.equal(JSON.parse(readFileSync(p('out/fr.json'), 'utf8')).format, 'joulebench-frontier/1');
  });

  it('an extension no format has is refused before anything runs (exit 2, one line)', () => {
    const r = run(['run', '-q', '--no-history', '-s', suiteFile, '-o', p('out/r.xlsx')]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /r\.xlsx: cannot write "\.xlsx" here; the extension picks the format: \.json, \.md/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.ok(!existsSync(p('out/r.xlsx.results.jsonl')) && !existsSync(p('out/r.results.jsonl.bak')));
    assert.equal(run(['compare', p('out/r.json'), p('out/b.json'), '-o', p('out/c.html')]).code, 2, 'compare has no HTML page');
  });
});

describe('side files and output paths that cannot hold a report', () => {
  it('-o /dev/null writes nothing beside it: results and receipt go to the run folder, and it says where', () => {
    const cwd = p('devnull');
    mkdirSync(cwd);
    const r = run(['run', '--no-history', '-s', suiteFile, '-o', '/dev/null'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync('/dev/null.results.jsonl') && !existsSync('/dev/null.receipt.json'));
    assert.match(r.stderr, /\/dev\/null is not a regular file, so nothing is written beside it: results and receipt go to \.joulebench\/runs\//);
    const files = readdirSync(join(cwd, '.joulebench', 'runs'));
    assert.ok(files.some((f) => f.endsWith('.results.jsonl')) && files.some((f) => f.endsWith('.receipt.json')), files.join(' '));
  });

  it('code -o /dev/null streams its datapoints to the run folder', () => {
    const cwd = p('devnull-code');
    mkdirSync(cwd);
    const r = run(['code', '--no-history', '--solvers', 'noop', '--sandbox', 'none', '--limit', '1', '-q', '-o', '/dev/null'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync('/dev/null.datapoints.jsonl'));
    assert.match(r.stderr, /datapoints go to \.joulebench\/runs\//);
    assert.ok(readdirSync(join(cwd, '.joulebench', 'runs')).some((f) => f.endsWith('.datapoints.jsonl')));
  });

  const oneLine = (r: { code: number | null; stderr: string }, re: RegExp) => {
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, re);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.doesNotMatch(r.stderr, /internal error/);
  };

  it('a folder, a path under /proc, a full device: one line, exit 2, no hang', () => {
    oneLine(run(['run', '-q', '--no-history', '-s', suiteFile, '-o', dir]), /--out .*: is a directory; name a file inside it/);
    oneLine(run(['report', p('out/r.json'), '-o', p('out')]), /is a directory/);
    // Before the fix this spun at 100 % CPU: spawnSync's timeout turns a hang into a failure here.
    const proc = spawnSync(process.execPath, [join(import.meta.dirname, '../../bin/joulebench.js'), 'run', '-q', '--no-history', '-s', suiteFile, '-o', '/proc/self/comm'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NO_COLOR: '1', JOULEBENCH_HOME: home },
    });
    oneLine({ code: proc.status, stderr: proc.stderr }, /refusing to write under \/proc/);
    oneLine(run(['frontier', p('out/r.json'), '-o', '/sys/kernel/x.json']), /refusing to write under \/sys/);
    // A device other than /dev/null is refused before anything is written.
    oneLine(run(['report', p('out/r.json'), '-o', '/dev/full']), /--out \/dev\/full: is a character device, not a regular file/);
  });

  it('a read-only file system and a full one (tmpfs mounts; skipped where mounting is not allowed)', (t) => {
    const ro = p('ro');
    const full = p('full');
    mkdirSync(ro);
    mkdirSync(full);
    const m1 = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', ro]);
    if (m1.status !== 0) return t.skip(`cannot mount a tmpfs here: ${String(m1.stderr).trim()}`);
    try {
      oneLine(run(['report', p('out/r.json'), '-o', join(ro, 'r.html')]), /cannot write: read-only file system \(EROFS\)/);
      oneLine(run(['run', '-q', '--no-history', '-s', suiteFile, '-o', join(ro, 'r.json')]), /cannot write.*read-only file system \(EROFS\)/);
    } finally {
      spawnSync('umount', [ro]);
    }
    const m2 = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', full]);
    if (m2.status !== 0) return t.skip('cannot mount a second tmpfs');
    try {
      // The 1 MB HTML page cannot fit in 16 KiB.
      oneLine(run(['report', p('out/r.json'), '-o', join(full, 'r.html')]), /cannot write: no space left on the device \(ENOSPC\)/);
      // A run whose results fill the disk mid-run: one line, exit 2.
      oneLine(run(['run', '-q', '--no-history', '-s', 'all', '--repeat', '20', '-o', join(full, 'r.json')]), /cannot write .*no space left on the device \(ENOSPC\)/);
    } finally {
      spawnSync('umount', [full]);
    }
  });
});

describe('--limit and --filter', () => {
  it('run: the selection is in the suite version and digest, so compare refuses a subset against the whole', () => {
    assert.equal(run(['run', '-q', '--no-history', '-s', 'router', '-o', p('whole.json')]).code, 0);
    const sub = run(['run', '-q', '--no-history', '-s', 'router', '--filter', '^rt-(kv|graph)', '--limit', '10', '-o', p('sub.json')]);
    assert.equal(sub.code, 0, sub.stderr);
    const r = JSON.parse(readFileSync(p('sub.json'), 'utf8')) as { case_count: number; suite: { version: string; digest: string } };
    assert.equal(r.case_count, 10, '7 kv + 8 graph, the first 10');
    assert.match(r.suite.version, /\+filter=\/\^rt-\(kv\|graph\)\/,limit=10$/);
    const whole = JSON.parse(readFileSync(p('whole.json'), 'utf8')) as { suite: { digest: string } };
    assert.notEqual(r.suite.digest, whole.suite.digest);
    const cmp = run(['compare', p('whole.json'), p('sub.json')]);
    assert.equal(cmp.code, 2);
    assert.match(cmp.stderr, /ran different cases/);
    const byTag = run(['run', '-q', '--no-history', '-s', suiteFile, '--filter', '^quotes$', '-o', p('tag.json')]);
    assert.equal(JSON.parse(readFileSync(p('tag.json'), 'utf8')).case_count, 1, byTag.stderr);
  });

  it('a filter that selects nothing, or is no regular expression, is exit 2', () => {
    const none = run(['run', '-q', '--no-history', '-s', 'router', '--filter', 'no-such-case']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /selected no case of suite router \(30 cases\)/);
    const bad = run(['run', '-q', '--no-history', '-s', 'router', '--filter', '(']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--filter "\(": not a valid regular expression/);
    assert.equal(run(['run', '-q', '--no-history', '-s', 'router', '--limit', '0']).code, 2);
  });

  it('code: --limit and --filter pick tasks, and the suite digest covers exactly those', () => {
    const r = run(['code', '--no-history', '--solvers', 'noop', '--sandbox', 'none', '--filter', 'off-by-one|median', '--limit', '1', '-q', '-o', p('code.json')]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(readFileSync(p('code.json'), 'utf8')) as { suite: { tasks: string[]; digest: string } };
    assert.equal(res.suite.tasks.length, 1);
    assert.match(res.suite.tasks[0]!, /off-by-one|median/);
    const csv = run(['code', '--report', p('code.json'), '-o', p('code.csv')]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.deepEqual(parseCsv(readFileSync(p('code.csv'), 'utf8'))[0]!.slice(0, 4), ['run', 'task', 'solver', 'rollout']);
  });
});
