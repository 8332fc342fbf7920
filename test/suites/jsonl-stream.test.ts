import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isJoulebenchError } from '../../src/core/errors.js';
import type { Case } from '../../src/core/types.js';
import { suiteDigest } from '../../src/suites/digest.js';
import { IdFingerprints, STREAM_BATCH, streamJsonlSuite } from '../../src/suites/jsonl-stream.js';
import { loadSuiteFile } from '../../src/suites/loader.js';
import { selectCases } from '../../src/suites/select.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-jsonl-stream-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every kind of case a suite file may hold: turns, choices, references, per-case scorers, weights, tags, non-ASCII. */
function variedLines(n: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const c: Record<string, unknown> = { id: `case-${i}`, expected: i % 5 === 0 ? null : `ans ${i} é 𝄞 "q" \\ \u0001` };
    if (i % 4 === 1) c.turns = [`turn one of ${i}`, `turn two ✓ ${i}`];
    else c.prompt = `What is ${i}? ${'ü'.repeat(i % 7)}\ttab`;
    if (i % 6 === 2) c.choices = ['a', 'b', `c${i}`];
    if (i % 9 === 3) c.reference = [`ref ${i}`];
    if (i % 8 === 4) c.scorer = 'exact';
    if (i % 10 === 7) c.weight = 2.5;
    if (i % 3 === 0) c.tags = ['even', `t${i % 4}`];
    if (i % 11 === 5) c.dataset = 'other';
    lines.push(JSON.stringify(c));
  }
  return lines;
}

function write(name: string, text: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function all(batches: Iterable<readonly Case[]>): Case[] {
  const out: Case[] = [];
  for (const b of batches) out.push(...b);
  return out;
}

/** The message of what `f` throws (a JoulebenchError), with its code. */
function failure(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(isJoulebenchError(e), `not a JoulebenchError: ${String(e)}`);
    return `${e.code}: ${e.message}`;
  }
  return 'no error';
}

describe('a streamed JSONL suite', () => {
  // Blank lines, CRLF endings, a BOM and no newline at the end: all as the in-memory reader takes them.
  const lines = variedLines(2 * STREAM_BATCH + 37);
  const text = '\ufeff' + lines.map((l, i) => (i % 13 === 0 ? `${l}\r\n\n` : `${l}\n`)).join('') + '   \n' + JSON.stringify({ id: 'last', prompt: 'p', expected: 'p' });
  const path = write('varied.jsonl', text);
  const inMemory = loadSuiteFile(path);

  for (const chunkBytes of [16, 1000, 1 << 16]) {
    it(`has the in-memory suite's digest and cases, in order (read ${chunkBytes} bytes at a time)`, () => {
      const s = streamJsonlSuite(path, { chunkBytes });
      assert.equal(s.digest, suiteDigest(inMemory));
      assert.equal(s.stream.count, inMemory.cases.length);
      assert.deepEqual({ name: s.name, version: s.version, scorer: s.scorer }, { name: inMemory.name, version: inMemory.version, scorer: inMemory.scorer });
      assert.deepEqual(all(s.stream.batches()), inMemory.cases);
      // Every pass reads the same cases again.
      assert.deepEqual(all(s.stream.batches()), inMemory.cases);
      assert.ok([...s.stream.batches()].every((b) => b.length <= STREAM_BATCH));
    });
  }

  it('applies --filter and --limit as selectCases does: same version, digest and cases', () => {
    for (const selection of [{ filter: 'even' }, { limit: 10 }, { filter: '^case-1', limit: 25 }, { filter: 'other', limit: 100_000 }]) {
      const s = streamJsonlSuite(path, { selection });
      const want = selectCases(inMemory, selection);
      assert.equal(s.version, want.version);
      assert.equal(s.digest, suiteDigest(want), JSON.stringify(selection));
      assert.deepEqual(all(s.stream.batches()), want.cases);
    }
    assert.equal(failure(() => streamJsonlSuite(path, { selection: { filter: 'nothing-matches-this' } })), failure(() => selectCases(inMemory, { filter: 'nothing-matches-this' })));
  });

  it('relabels the version before the selection, as a retried run is labelled', () => {
    const s = streamJsonlSuite(path, { selection: { limit: 3 }, relabel: (v) => `${v}/retry-2` });
    assert.equal(s.version, '1/retry-2+limit=3');
    assert.equal(s.digest, suiteDigest(selectCases({ ...inMemory, version: '1/retry-2' }, { limit: 3 })));
  });

  it('says whether a judge must score some case', () => {
    assert.equal(streamJsonlSuite(path).judged, false);
    const judged = write('judged.jsonl', `${lines[0]}\n${JSON.stringify({ id: 'j', prompt: 'p', expected: null, scorer: 'judge' })}\n`);
    assert.equal(streamJsonlSuite(judged).judged, true);
    assert.equal(streamJsonlSuite(judged, { selection: { limit: 1 } }).judged, false);
  });
});

describe('a streamed JSONL suite refuses what the in-memory reader refuses, with the same message', () => {
  const good = variedLines(50);
  const cases: [string, string | Buffer][] = [
    ['bad JSON on the last line', good.join('\n') + '\n{"id": "x", "prompt": \n'],
    ['a schema problem on the last line', good.join('\n') + '\n{"id": "x", "prompt": "p", "expected": 3}\n'],
    ['an unknown key', good.join('\n') + '\n{"id": "x", "prompt": "p", "expected": "e", "bogus\\u0007key": 1}\n'],
    ['a line that is not an object', good.join('\n') + '\n[1, 2]\n'],
    ['prompt and turns both missing', good.join('\n') + '\n{"id": "x", "expected": "e"}\n'],
    ['a duplicate id at the end', good.join('\n') + `\n${good[17]}\n`],
    ['a bad regex', good.join('\n') + '\n{"id": "x", "prompt": "p", "expected": "(a", "scorer": "regex"}\n'],
    ['an empty file', ''],
    ['only blank lines', '\n  \n\n'],
    ['bad UTF-8 at the end', Buffer.concat([Buffer.from(good.join('\n') + '\n'), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a])])],
    // Precedence: bad UTF-8 anywhere, then the first line that is not JSON, then the first schema problem, then duplicates.
    ['bad JSON after a schema problem', `${good[0]}\n{"id": "x", "prompt": 1, "expected": null}\n${good[1]}\n{oops\n`],
    ['a schema problem after a duplicate', `${good[0]}\n${good[0]}\n${good[1]}\n{"id": "y", "expected": null}\n`],
    ['a duplicate after a bad regex', `{"id": "r", "prompt": "p", "expected": "(", "scorer": "regex"}\n${good[0]}\n${good[0]}\n`],
    ['bad UTF-8 after bad JSON', Buffer.concat([Buffer.from('{oops\n'), Buffer.from(good.join('\n')), Buffer.from([0x0a, 0xc3, 0x28, 0x0a])])],
  ];
  for (const [what, text] of cases) {
    it(what, () => {
      const path = write(`bad-${what.replace(/\W+/g, '-')}.jsonl`, text);
      const want = failure(() => loadSuiteFile(path));
      assert.notEqual(want, 'no error');
      for (const chunkBytes of [7, 1 << 16]) assert.equal(failure(() => streamJsonlSuite(path, { chunkBytes })), want);
    });
  }

  it('a missing file, and a directory', () => {
    for (const path of [join(dir, 'nope.jsonl'), dir + '/']) {
      const p = path.endsWith('/') ? join(dir, 'adir.jsonl') : path;
      if (path.endsWith('/')) rmSync(p, { recursive: true, force: true });
      assert.equal(failure(() => streamJsonlSuite(p)), failure(() => loadSuiteFile(p)));
    }
  });

  it('finds a duplicate among 50,000 ids and names the first case that has it', () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ id: `id-${i}`, prompt: 'p', expected: null }));
    lines.push(JSON.stringify({ id: 'id-31337', prompt: 'again', expected: null }));
    const path = write('dup-late.jsonl', lines.join('\n'));
    const msg = failure(() => streamJsonlSuite(path));
    assert.match(msg, /case 50000 \(id "id-31337"\): id: duplicates case 31337$/);
    assert.equal(msg, failure(() => loadSuiteFile(path)));
  });
});

describe('a streamed suite whose file changes during the run', () => {
  const lines = variedLines(STREAM_BATCH + 10);

  it('is refused before any case of a pass when its size or mtime differ', () => {
    const path = write('grows.jsonl', lines.join('\n') + '\n');
    const s = streamJsonlSuite(path);
    writeFileSync(path, lines.join('\n') + '\n' + JSON.stringify({ id: 'new', prompt: 'p', expected: null }) + '\n');
    const it = s.stream.batches()[Symbol.iterator]();
    assert.match(failure(() => it.next()), /^E_SUITE: suite .*grows\.jsonl: changed on disk since the run checked it \(size, modification time or inode differ\); this run is incomplete/);
  });

  it('is refused at the end of the pass, before its last batch, when same-size content changed under the same mtime', () => {
    const path = write('edited.jsonl', lines.join('\n') + '\n');
    // A whole-second mtime, so it can be put back exactly.
    utimesSync(path, 1_700_000_000, 1_700_000_000);
    const s = streamJsonlSuite(path);
    // The last case's id changed, size kept; the mtime put back as it was.
    const edited = lines.slice(0, -1).concat(lines.at(-1)!.replace(/"case-/, '"CASE-')).join('\n') + '\n';
    assert.notEqual(edited, lines.join('\n') + '\n');
    assert.equal(edited.length, lines.join('\n').length + 1);
    writeFileSync(path, edited);
    utimesSync(path, 1_700_000_000, 1_700_000_000);
    const got: Case[] = [];
    assert.match(
      failure(() => {
        for (const b of s.stream.batches()) got.push(...b);
      }),
      /changed on disk since the run checked it \(its cases no longer have the digest checked\)/,
    );
    assert.equal(got.length, STREAM_BATCH, 'the batch holding the changed case was never handed over');
  });
});

describe('IdFingerprints', () => {
  it('tells the repeated ids from the others, in any order, across many chunks', () => {
    const f = new IdFingerprints();
    for (let i = 0; i < 100_000; i++) f.add(`x${i}`);
    const again = [''];
    for (let i = 0; i < 100_000; i += 997) again.push(`x${i}`);
    f.add('');
    for (const id of again.reverse()) f.add(id);
    assert.deepEqual([...f.repeated()].sort(), again.map((id) => IdFingerprints.key(id)).sort());
    assert.equal(f.repeated().size, 0, 'dropped once read');
  });
});
