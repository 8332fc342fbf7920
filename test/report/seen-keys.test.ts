import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeenKeys } from '../../src/report/seen-keys.js';

test('SeenKeys finds exactly the keys seen before, against a Set of every key (random keys, growth, huge and negative indexes)', () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 50; round++) {
    const seen = new SeenKeys();
    const reference = new Set<string>();
    let repeats = 0;
    for (let i = 0; i < 2000; i++) {
      const rank = rand(2);
      const pass = rand(4);
      // Mostly small, some past the first bit set's size, a few past the sparse limit or negative (hostile files).
      const pick = rand(20);
      const index = pick === 0 ? 2 ** 30 + rand(3) : pick === 1 ? -1 - rand(3) : pick < 5 ? rand(5000) : rand(300);
      const key = `${rank}:${pass}:${index}`;
      const want = reference.has(key);
      reference.add(key);
      if (want) repeats++;
      assert.equal(seen.add(rank, pass, index), want, key);
    }
    assert.equal(seen.repeats, repeats);
  }
});

test('SeenKeys: the same index in another pass or phase is not a repeat', () => {
  const seen = new SeenKeys();
  assert.equal(seen.add(1, 0, 5), false);
  assert.equal(seen.add(1, 1, 5), false);
  assert.equal(seen.add(0, 0, 5), false);
  assert.equal(seen.add(1, 0, 5), true);
  assert.equal(seen.repeats, 1);
});
