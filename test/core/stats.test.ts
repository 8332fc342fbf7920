import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { median, nearestRank, pctChange } from '../../src/core/stats.js';

describe('nearestRank', () => {
  it('returns the only value for any percentile of one value', () => {
    for (const p of [1, 50, 95, 99, 100]) assert.equal(nearestRank([7], p), 7);
  });
  it('returns null for no values', () => {
    assert.equal(nearestRank([], 50), null);
  });
  it('always returns an observed value (no interpolation)', () => {
    assert.equal(nearestRank([1, 2, 3, 4], 50), 2);
    assert.equal(nearestRank([10, 20], 50), 10);
    assert.equal(nearestRank([10, 20], 51), 20);
  });
  it('handles ties', () => {
    assert.equal(nearestRank([5, 5, 5, 9], 50), 5);
    assert.equal(nearestRank([5, 5, 5, 9], 75), 5);
    assert.equal(nearestRank([5, 5, 5, 9], 76), 9);
  });
  it('p99 of 50 values is the maximum (rank ceil(49.5) = 50), p95 is rank 48', () => {
    const values = Array.from({ length: 50 }, (_, i) => 50 - i); // 50..1, unsorted order
    assert.equal(nearestRank(values, 99), 50);
    assert.equal(nearestRank(values, 95), 48);
    assert.equal(nearestRank(values, 50), 25);
  });
  it('p95 of 20 values is rank 19, not 20 (float 0.95 × 20 guard)', () => {
    const values = Array.from({ length: 20 }, (_, i) => i + 1);
    assert.equal(nearestRank(values, 95), 19);
  });
  it('does not reorder its input', () => {
    const v = [3, 1, 2];
    nearestRank(v, 50);
    assert.deepEqual(v, [3, 1, 2]);
  });
  it('rejects a percentile outside (0, 100]', () => {
    assert.throws(() => nearestRank([1], 0), RangeError);
    assert.throws(() => nearestRank([1], 101), RangeError);
  });
});

describe('median, pctChange', () => {
  it('median of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 2, 3]), 2.5);
    assert.equal(median([]), null);
  });
  it('pctChange is null for a zero, null or non-finite base', () => {
    assert.equal(pctChange(0, 5), null);
    assert.equal(pctChange(0, 0), 0, '0 → 0 is no change');
    assert.equal(pctChange(null, 5), null);
    assert.equal(pctChange(5, null), null);
    assert.equal(pctChange(Infinity, 5), null);
    assert.equal(pctChange(10, 5), -50);
    assert.equal(pctChange(10, 15), 50);
  });
});
