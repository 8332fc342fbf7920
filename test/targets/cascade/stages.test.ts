import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AnswerRequest, Case } from '../../../src/core/types.js';
import { CacheStage } from '../../../src/targets/cascade/cache.js';
import { createEchoTarget } from '../../../src/targets/cascade/echo.js';
import { REFERENCE_KV, REFERENCE_TRIPLES } from '../../../src/targets/cascade/fixtures.js';
import { GraphStage } from '../../../src/targets/cascade/graph.js';
import { KvStage } from '../../../src/targets/cascade/kv.js';
import { NeuralStage } from '../../../src/targets/cascade/neural.js';
import { loadSuite } from '../../../src/suites/loader.js';

const c: Case = { id: 'x', prompt: 'p', expected: null, dataset: 'd', weight: 1, tags: [] };
const req = (prompt: string): AnswerRequest => ({ prompt, case: c });

describe('CacheStage (LRU)', () => {
  it('misses, then hits once a neural answer is admitted, charging its energy either way', () => {
    const s = new CacheStage({ energy_uj: 7 });
    assert.deepEqual(s.tryAnswer('q'), { text: null, energy_uj: 7 });
    s.observe('q', 'a', 'neural');
    assert.deepEqual(s.tryAnswer('q'), { text: 'a', energy_uj: 7 });
    assert.equal(s.hits, 1);
    assert.equal(s.misses, 1);
  });
  it('evicts the least recently used entry at capacity', () => {
    const s = new CacheStage({ capacity: 2 });
    s.observe('a', 'A', 'neural');
    s.observe('b', 'B', 'neural');
    s.tryAnswer('a'); // a is now most recent
    s.observe('c', 'C', 'neural'); // evicts b
    assert.equal(s.size, 2);
    assert.ok(s.has('a'));
    assert.ok(!s.has('b'));
    assert.ok(s.has('c'));
    assert.equal(s.evictions, 1);
  });
  it('holds exactly 1024 entries by default', () => {
    const s = new CacheStage();
    for (let i = 0; i < 1025; i++) s.observe(`q${i}`, 'a', 'neural');
    assert.equal(s.capacity, 1024);
    assert.equal(s.size, 1024);
    assert.ok(!s.has('q0'));
    assert.ok(s.has('q1024'));
  });
  it('admits only neural answers to short prompts (the documented policy)', () => {
    const s = new CacheStage();
    s.observe('kv question', 'v', 'kv');
    s.observe('graph question', 'g', 'graph');
    s.observe('x'.repeat(81), 'long', 'neural');
    s.observe('x'.repeat(80), 'short', 'neural');
    assert.equal(s.size, 1);
    assert.ok(s.has('x'.repeat(80)));
  });
  it('rejects a capacity below 1', () => {
    assert.throws(() => new CacheStage({ capacity: 0 }), RangeError);
  });
});

describe('KvStage', () => {
  const kv = new KvStage(REFERENCE_KV);
  it('is seeded with exactly the seven constants the rt-kv cases ask about, and answers each', () => {
    assert.equal(kv.size, 7);
    const router = loadSuite('router');
    const kvCases = router.cases.filter((x) => x.id.startsWith('rt-kv-'));
    assert.equal(kvCases.length, 7);
    for (const k of kvCases) {
      const r = kv.tryAnswer(k.prompt!);
      assert.ok(r.text !== null, `${k.id} unanswered`);
      assert.ok(r.text.toLowerCase().includes(k.expected!.toLowerCase()), `${k.id}: ${r.text}`);
    }
  });
  it('is an exact-key lookup: a different question passes', () => {
    assert.equal(kv.tryAnswer('What is the default port for HTTP?').text, null);
    assert.equal(kv.tryAnswer('Tell me about HTTPS ports').text, null);
  });
  it('ignores case and punctuation', () => {
    assert.equal(kv.tryAnswer('what is the DEFAULT port for https').text, '443');
  });
});

describe('GraphStage', () => {
  const g = new GraphStage(REFERENCE_TRIPLES);
  it('answers every rt-graph case by subject and predicate', () => {
    const router = loadSuite('router');
    const graphCases = router.cases.filter((x) => x.id.startsWith('rt-graph-'));
    assert.equal(graphCases.length, 8);
    for (const k of graphCases) {
      const r = g.tryAnswer(k.prompt!);
      assert.ok(r.text?.toLowerCase().includes(k.expected!.toLowerCase()), `${k.id}: ${r.text}`);
    }
  });
  it('needs both the subject and the predicate', () => {
    assert.equal(g.tryAnswer('Tell me about Australia').text, null); // subject, no predicate
    assert.equal(g.tryAnswer('What is the capital of Atlantis?').text, null); // predicate, no subject
  });
  it('matches whole words only, and prefers the longest subject', () => {
    const store = new GraphStage([
      { subject: 'Africa', predicate: 'capital', object: 'none' },
      { subject: 'South Africa', predicate: 'capital', object: 'Pretoria' },
      { subject: 'gold', predicate: 'symbol', object: 'Au' },
    ]);
    assert.equal(store.tryAnswer('What is the capital of South Africa?').text, 'Pretoria');
    assert.equal(store.tryAnswer('What is the symbol of marigold?').text, null);
  });
});

describe('NeuralStage', () => {
  it('delegates to any target and reports its energy in µJ', async () => {
    const s = new NeuralStage(createEchoTarget({ energy_j: 2.5 }));
    const r = await s.tryAnswer('hello', req('hello'));
    assert.equal(r.text, 'hello');
    assert.equal(r.energy_uj, 2_500_000);
  });
  it('reports null energy (not 0) when the backend reports none', async () => {
    const s = new NeuralStage({ id: 'silent', kind: 'test', answer: async () => ({ text: 'hi' }), describe: () => ({}) });
    const r = await s.tryAnswer('q', req('q'));
    assert.equal(r.energy_uj, null);
  });
});
