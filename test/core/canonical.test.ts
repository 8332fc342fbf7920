import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { canonicalJson, digestOf } from '../../src/core/canonical.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined like JSON.stringify', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } }), '{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
    assert.equal(canonicalJson([undefined, NaN, 'x"y']), '[null,null,"x\\"y"]');
  });
  it('matches JSON.stringify for already-sorted input', () => {
    const v = { a: [1, 2.5, 'three', true, null], b: { c: 'é\n' } };
    assert.equal(canonicalJson(v), JSON.stringify(v));
  });
  it('digests the MMLU-style ids document as documented', () => {
    // sha256 of {"ids":["a","b"],"version":"v1"} — independent of key order in the input.
    assert.equal(digestOf({ version: 'v1', ids: ['a', 'b'] }), digestOf({ ids: ['a', 'b'], version: 'v1' }));
    assert.equal(digestOf({ ids: ['a', 'b'], version: 'v1' }), 'sha256:' + createHash('sha256').update('{"ids":["a","b"],"version":"v1"}').digest('hex'));
  });
});
