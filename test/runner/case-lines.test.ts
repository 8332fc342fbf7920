import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CaseLines } from '../../src/runner/case-lines.js';

test('CaseLines gives the first line of exactly the keys seen before, against a Map of every key (random keys, growth, huge and negative indexes)', () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  for (let round = 0; round < 50; round++) {
    const seen = new CaseLines();
    const reference = new Map<string, number>();
    for (let line = 1; line <= 2000; line++) {
      const rank = rand(2) as 0 | 1;
      const pass = rand(4);
      // Mostly small, some past the first array's size, a few past the dense limit or negative (hostile files).
      const pick = rand(20);
      const index = pick === 0 ? 2 ** 30 + rand(3) : pick === 1 ? -1 - rand(3) : pick < 5 ? rand(5000) : rand(300);
      const key = `${rank}:${pass}:${index}`;
      const want = reference.get(key) ?? 0;
      if (want === 0) reference.set(key, line);
      assert.equal(seen.add(rank, pass, index, line), want, key);
    }
  }
});

test('CaseLines: the same index in another pass or phase is not a repeat', () => {
  const seen = new CaseLines();
  assert.equal(seen.add(1, 0, 5, 2), 0);
  assert.equal(seen.add(1, 1, 5, 3), 0);
  assert.equal(seen.add(0, 0, 5, 4), 0);
  assert.equal(seen.add(1, 0, 5, 9), 2);
});

test('CaseLines: later turns of a conversation are keys of their own, each still caught when repeated', () => {
  const seen = new CaseLines();
  assert.equal(seen.add(1, 0, 5, 2), 0);
  assert.equal(seen.add(1, 0, 5, 3, 2), 0);
  assert.equal(seen.add(1, 0, 5, 4, 3), 0);
  assert.equal(seen.add(1, 0, 5, 8, 2), 3);
  assert.equal(seen.add(1, 0, 5, 9, 1), 2);
});

test('CaseLines on a hostile file: a huge index in a new pass each line stays small and exact', () => {
  const seen = new CaseLines();
  const t0 = process.hrtime.bigint();
  const rss0 = process.memoryUsage().arrayBuffers;
  for (let pass = 0; pass < 3000; pass++) assert.equal(seen.add(1, pass, 2 ** 24 - 1, pass + 1), 0);
  for (let pass = 0; pass < 3000; pass += 7) assert.equal(seen.add(1, pass, 2 ** 24 - 1, 5000), pass + 1);
  // Small keys added before and after the switch to the Map are still found.
  assert.equal(seen.add(0, 1, 3, 6000), 0);
  assert.equal(seen.add(0, 1, 3, 6001), 6000);
  assert.ok(process.memoryUsage().arrayBuffers - rss0 < 64 * 2 ** 20, 'array buffers grew by less than 64 MB');
  assert.ok(Number(process.hrtime.bigint() - t0) / 1e9 < 5, 'done in under 5 s');
});

test('CaseLines: keys kept in arrays before the budget ran out are still found, with their lines, after the move to the Map', () => {
  const seen = new CaseLines();
  for (let i = 0; i < 1000; i++) assert.equal(seen.add(1, 0, i, i + 1), 0);
  // A new pass with a large index each line spends the budget: everything moves to the Map.
  for (let pass = 1; pass < 20; pass++) seen.add(1, pass, 2 ** 23 + pass, 1000 + pass);
  for (let i = 0; i < 1000; i += 37) assert.equal(seen.add(1, 0, i, 3000), i + 1, `index ${i}`);
  assert.equal(seen.add(1, 0, 1000, 3001), 0);
});

test('CaseLines: a warmup and a scored line of a huge pass number are different keys', () => {
  const seen = new CaseLines();
  assert.equal(seen.add(0, 2 ** 53, 1, 1), 0);
  assert.equal(seen.add(1, 2 ** 53, 1, 2), 0);
});
