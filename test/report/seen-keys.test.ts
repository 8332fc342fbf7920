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
      const rank = rand(2) as 0 | 1;
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

test('SeenKeys on a hostile file: a huge index in a new pass each line stays small and exact (it asked 4 MB a line)', () => {
  const seen = new SeenKeys();
  const t0 = process.hrtime.bigint();
  const rss0 = process.memoryUsage().arrayBuffers;
  for (let pass = 0; pass < 3000; pass++) assert.equal(seen.add(1, pass, 2 ** 24 - 1), false);
  for (let pass = 0; pass < 3000; pass += 7) assert.equal(seen.add(1, pass, 2 ** 24 - 1), true);
  // Small keys added before and after the switch to the Set are still found.
  assert.equal(seen.add(0, 1, 3), false);
  assert.equal(seen.add(0, 1, 3), true);
  assert.ok(process.memoryUsage().arrayBuffers - rss0 < 64 * 2 ** 20, 'array buffers grew by less than 64 MB');
  assert.ok(Number(process.hrtime.bigint() - t0) / 1e9 < 5, 'done in under 5 s');
});

test('SeenKeys: keys kept in bit sets before the budget ran out are still found after the move to the Set', () => {
  const seen = new SeenKeys();
  for (let i = 0; i < 1000; i++) assert.equal(seen.add(1, 0, i), false);
  // A new pass with a large index each line spends the budget: everything moves to the Set.
  for (let pass = 1; pass < 20; pass++) seen.add(1, pass, 2 ** 23 + pass);
  for (let i = 0; i < 1000; i += 37) assert.equal(seen.add(1, 0, i), true, `index ${i}`);
  assert.equal(seen.add(1, 0, 1000), false);
});

test('SeenKeys: a warmup and a scored line of a huge pass number are different keys', () => {
  const seen = new SeenKeys();
  assert.equal(seen.add(0, 2 ** 53, 1), false);
  assert.equal(seen.add(1, 2 ** 53, 1), false);
  assert.equal(seen.repeats, 0);
});
