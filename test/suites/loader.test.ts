import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { JoulebenchError } from '../../src/core/errors.js';
import { suiteDigest } from '../../src/suites/digest.js';
import { loadSuite } from '../../src/suites/loader.js';
import { promptOf } from '../../src/suites/prompt.js';

const dir = mkdtempSync(join(tmpdir(), 'jb-suite-'));
function file(name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}
function errorOf(fn: () => unknown): JoulebenchError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof JoulebenchError, `expected JoulebenchError, got ${e}`);
    return e;
  }
  assert.fail('did not throw');
}

describe('bundled suites', () => {
  const mt = loadSuite('mt');
  const router = loadSuite('router');
  it('mt has 20 cases across the eight MT-Bench categories', () => {
    assert.equal(mt.cases.length, 20);
    const cats = new Set(mt.cases.flatMap((c) => c.tags));
    for (const cat of ['arithmetic', 'reasoning', 'multi-turn', 'code', 'writing', 'factual-recall', 'explanation', 'summarisation']) {
      assert.ok(cats.has(cat), `missing category ${cat}`);
    }
  });
  it('writing cases are unscored; multi-turn cases are stored as turns', () => {
    for (const c of mt.cases.filter((c) => c.tags.includes('writing'))) assert.equal(c.expected, null);
    const multi = mt.cases.filter((c) => c.tags.includes('multi-turn'));
    assert.ok(multi.length >= 2);
    for (const c of multi) assert.ok(c.turns && c.turns.length >= 2);
  });
  it('multi-turn cases are sent joined by a literal Follow-up: line', () => {
    const c = mt.cases.find((c) => c.turns)!;
    const p = promptOf(c);
    assert.equal(p, `${c.turns![0]}\nFollow-up: ${c.turns![1]}`);
    assert.match(p, /\nFollow-up: /);
  });
  it('router has 6 cache, 7 kv, 8 graph and 9 unscored neural cases', () => {
    const count = (p: string) => router.cases.filter((c) => c.id.startsWith(p)).length;
    assert.equal(router.cases.length, 30);
    assert.deepEqual([count('rt-cache-'), count('rt-kv-'), count('rt-graph-'), count('rt-neural-')], [6, 7, 8, 9]);
    for (const c of router.cases.filter((c) => c.id.startsWith('rt-neural-'))) assert.equal(c.expected, null);
  });
  it('all is mt then router, and keeps each case dataset', () => {
    const all = loadSuite('all');
    assert.deepEqual(
      all.cases.map((c) => c.id),
      [...mt.cases, ...router.cases].map((c) => c.id),
    );
    assert.equal(all.cases[0]!.dataset, 'mt');
    assert.equal(all.cases[20]!.dataset, 'router');
  });
  it('no scored case gives its answer away in its prompt (except echo tasks), so the echo backend cannot score by accident', () => {
    for (const c of [...mt.cases, ...router.cases]) {
      if (c.expected === null || c.tags.includes('echo-task')) continue;
      assert.ok(!promptOf(c).toLowerCase().includes(c.expected.toLowerCase()), `${c.id} contains its expected answer`);
    }
  });
  it('digests differ between suites and are stable', () => {
    assert.equal(suiteDigest(loadSuite('mt')), suiteDigest(mt));
    assert.notEqual(suiteDigest(mt), suiteDigest(router));
    assert.match(suiteDigest(mt), /^sha256:[0-9a-f]{64}$/);
  });
});

describe('suite files', () => {
  it('loads JSON, JSONL and YAML with defaults', () => {
    const json = loadSuite(file('a.json', JSON.stringify({ name: 'mine', cases: [{ id: 'q1', prompt: 'hi', expected: 'x' }] })));
    assert.equal(json.name, 'mine');
    assert.equal(json.scorer, 'substring');
    assert.equal(json.cases[0]!.weight, 1);
    assert.equal(json.cases[0]!.dataset, 'mine');
    const jsonl = loadSuite(file('b.jsonl', '{"id":"a","prompt":"p","expected":null}\n\n{"id":"b","turns":["t1","t2"],"expected":"y"}\n'));
    assert.equal(jsonl.name, 'b');
    assert.equal(jsonl.cases.length, 2);
    const yaml = loadSuite(file('c.yaml', 'name: y\nscorer: exact\ncases:\n  - id: a\n    prompt: p\n    expected: "1"\n    weight: 2\n'));
    assert.equal(yaml.scorer, 'exact');
    assert.equal(yaml.cases[0]!.weight, 2);
    const list = loadSuite(file('d.yaml', '- id: a\n  prompt: p\n  expected: z\n'));
    assert.equal(list.cases.length, 1);
  });
  it('names the file, the case index and id, and the key', () => {
    const p = file('bad.json', JSON.stringify({ name: 's', cases: [{ id: 'ok', prompt: 'p', expected: 'x' }, { id: 'q2', prompt: 'p', expected: 5 }] }));
    const e = errorOf(() => loadSuite(p));
    assert.equal(e.code, 'E_SUITE');
    assert.equal(e.exitCode, 2);
    assert.match(e.message, new RegExp(`^suite ${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: case 1 \\(id "q2"\\): expected: `));
    assert.ok(!e.message.includes('\n'));
  });
  it('reports a missing key, an unknown key, prompt and turns together, duplicates, bad weight', () => {
    const cases = (c: unknown) => file(`x${Math.random()}.json`, JSON.stringify({ name: 's', cases: [c] }));
    assert.match(errorOf(() => loadSuite(cases({ id: 'a', prompt: 'p' }))).message, /case 0 \(id "a"\): expected: is required/);
    assert.match(errorOf(() => loadSuite(cases({ id: 'a', prompt: 'p', expected: null, colour: 1 }))).message, /colour: unknown key/);
    assert.match(errorOf(() => loadSuite(cases({ id: 'a', prompt: 'p', turns: ['t'], expected: null }))).message, /prompt: give exactly one/);
    assert.match(errorOf(() => loadSuite(cases({ id: 'a', prompt: 'p', expected: null, weight: 0 }))).message, /weight: must be > 0/);
    const dup = file('dup.json', JSON.stringify({ name: 's', cases: [{ id: 'a', prompt: 'p', expected: null }, { id: 'a', prompt: 'q', expected: null }] }));
    assert.match(errorOf(() => loadSuite(dup)).message, /case 1 \(id "a"\): id: duplicates case 0/);
  });
  it('reports syntax errors with the line (JSONL), a missing file, an unknown extension', () => {
    assert.match(errorOf(() => loadSuite(file('e.jsonl', '{"id":"a","prompt":"p","expected":null}\n{oops\n'))).message, /line 2: not valid JSON/);
    assert.match(errorOf(() => loadSuite(join(dir, 'nope.json'))).message, /no such file/);
    assert.match(errorOf(() => loadSuite(file('f.txt', 'x'))).message, /unknown file type/);
    assert.match(errorOf(() => loadSuite(file('g.json', '{'))).message, /not valid JSON/);
    assert.match(errorOf(() => loadSuite(file('h.yaml', 'a: [\n'))).message, /not valid YAML/);
  });
  it('rejects an invalid pattern in a regex suite at load time', () => {
    const p = file('re.yaml', 'scorer: regex\ncases:\n  - id: q1\n    prompt: hi\n    expected: "(["\n');
    assert.match(errorOf(() => loadSuite(p)).message, /case 0 \(id "q1"\): expected: not a valid regular expression/);
  });

  it('rejects an unknown scorer and an empty suite', () => {
    assert.match(errorOf(() => loadSuite(file('i.json', JSON.stringify({ name: 's', scorer: 'vibes', cases: [{ id: 'a', prompt: 'p', expected: null }] })))).message, /scorer: /);
    assert.match(errorOf(() => loadSuite(file('j.json', JSON.stringify({ name: 's', cases: [] })))).message, /cases: must hold at least one case/);
  });
});

describe('suiteDigest', () => {
  it('equals the sha256 of the canonical JSON of the documented description', async () => {
    const { digestOf } = await import('../../src/core/canonical.js');
    const { caseDescriptor } = await import('../../src/suites/digest.js');
    for (const s of [loadSuite('mt'), loadSuite('router')]) {
      const withChoices = { ...s, cases: s.cases.map((c, i) => (i === 0 ? { ...c, choices: ['x', 'y'] } : c)) };
      for (const suite of [s, withChoices]) {
        assert.equal(
          suiteDigest(suite),
          digestOf({ name: suite.name, version: suite.version, scorer: suite.scorer, cases: suite.cases.map(caseDescriptor) }),
        );
      }
    }
  });

  it('stays the documented digest for odd text, many cases (several hash chunks) and fractional weights', async () => {
    const { digestOf } = await import('../../src/core/canonical.js');
    const { caseDescriptor } = await import('../../src/suites/digest.js');
    const odd = ['é “q” \\ "x"', 'tab\tnew\nline', '🙂 \ud83d lone', 'x'.repeat(70_000)];
    const cases = Array.from({ length: 2_000 }, (_, i) => ({
      id: `c-${i}-${odd[i % odd.length]!.slice(0, 20)}`,
      dataset: i % 3 === 0 ? 'd"s' : 'ds',
      prompt: i === 7 ? odd[3]! : `${odd[i % 3]} ${i}`,
      expected: i % 5 === 0 ? null : odd[i % 3]!,
      weight: i % 4 === 0 ? 0.25 : 1,
      tags: [],
      ...(i % 11 === 0 ? { choices: ['a "1"', 'b'] } : {}),
      ...(i % 13 === 0 ? { turns: ['first', 'then ü'] } : {}),
    }));
    const suite = { name: 'odd', version: '2', scorer: 'substring' as const, source: 'test', cases };
    assert.equal(suiteDigest(suite), digestOf({ name: suite.name, version: suite.version, scorer: suite.scorer, cases: cases.map(caseDescriptor) }));
  });

  it('stays the documented digest when every character needs a six-byte escape, at any buffer edge', async () => {
    const { digestOf } = await import('../../src/core/canonical.js');
    const { caseDescriptor } = await import('../../src/suites/digest.js');
    const escaped = (n: number) => '\u0001'.repeat(n);
    const suites = [
      [{ id: escaped(1), dataset: escaped(1), prompt: escaped(11_000), expected: null, weight: 1 / 3, tags: [] }],
      [{ id: 'x', dataset: 'd', prompt: '\ud800'.repeat(12_000), expected: escaped(3), weight: 1, tags: [], choices: [] }],
      // 120 small cases: one of them lands on the edge of the 64 KiB hashing buffer.
      Array.from({ length: 120 }, (_, i) => ({ id: `c${i}`, dataset: 'd', prompt: escaped(161), expected: null, weight: 1 / 3, tags: [] })),
    ];
    for (const cases of suites) {
      const suite = { name: 'esc', version: '1', scorer: 'substring' as const, source: 'test', cases };
      assert.equal(suiteDigest(suite), digestOf({ name: suite.name, version: suite.version, scorer: suite.scorer, cases: cases.map(caseDescriptor) }));
    }
  });
});
