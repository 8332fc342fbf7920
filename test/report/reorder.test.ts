import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CaseResult } from '../../src/core/types.js';
import { ReorderWindow } from '../../src/report/reorder.js';
import { seededRng } from '../../src/stats/rng.js';

const rng = seededRng('reorder-window');
type Line = { rank: number; pass: number; index: number; seq: number };
const rankOf = (l: Line) => l.rank;
const caseOf = (l: Line): CaseResult => ({ phase: l.rank === 0 ? 'warmup' : 'scored', pass: l.pass, index: l.index, case_id: String(l.seq), trace: [{ stage: 'kv', hit: true, energy_uj: l.seq }] }) as unknown as CaseResult;
const stable = (ls: Line[]) => [...ls].sort((a, b) => a.rank - b.rank || a.pass - b.pass || a.index - b.index || a.seq - b.seq);

/**
 * Case lines in case order, each written up to `late` places later; keys packed or not (a pass ≥ 1024,
 * an index ≥ 2^41); with `repeat`, one key twice, the second line right after the first in case order.
 */
function lines(n: number, late: number, big: boolean, repeat = true): Line[] {
  const sorted: Line[] = [];
  for (let i = 0; i < n; i++) {
    const rank = i < n / 10 ? 0 : 1;
    const pass = big && i % 7 === 0 ? 1024 + (i >> 4) : i >> 6;
    sorted.push({ rank, pass, index: big && i % 5 === 0 ? 2 ** 41 + i : i % 64, seq: 0 });
  }
  // A repeated key (a resumed file): file order decides.
  if (repeat) sorted.splice(n >> 1, 0, { ...sorted[n >> 1]! });
  const at = stable(sorted.map((l, i) => ({ ...l, seq: i }))).map((l, i) => ({ l, t: i + rng.below(late + 1) }));
  return at.sort((a, b) => a.t - b.t).map(({ l }, seq) => ({ ...l, seq }));
}

describe('ReorderWindow: a nearly ordered stream back in case order', () => {
  it('restores case order when no line is more than the window late; a repeated key in order, or refused, never misplaced', () => {
    for (const big of [false, true]) {
      for (const repeat of [false, true]) {
        for (const [late, size] of [[0, 1], [5, 8], [31, 32], [100, 4096]] as const) {
          const file = lines(3000, late, big, repeat);
          const out: string[] = [];
          const w = new ReorderWindow(size, (r) => out.push(r.case_id));
          // Alternate copied (the scanner's reused object) and held-as-is lines; mutate the source after a copy.
          let ok = true;
          for (const l of file) {
            const r = caseOf(l);
            ok &&= w.push(r, rankOf(l), l.seq % 2 === 0);
            if (l.seq % 2 === 0) {
              r.case_id = 'overwritten';
              r.trace![0]!.energy_uj = -1;
            }
          }
          ok &&= w.drain();
          const label = `late ${late}, window ${size}, big ${big}, repeat ${repeat}`;
          // A repeated key written after its successor was handed out is refused (the caller orders the file
          // another way); without one, every file here is restored.
          if (!repeat) assert.ok(ok, label);
          if (ok) assert.deepEqual(out, stable(file).map((l) => String(l.seq)), label);
        }
      }
    }
  });

  it('hands a case out as soon as it is the next in case order, holding only what is out of place', () => {
    // One pass of 6,000 cases, each written up to 6 places late.
    const at = Array.from({ length: 6000 }, (_, index) => ({ index, t: index + rng.below(7) })).sort((a, b) => a.t - b.t);
    let out = 0;
    const w = new ReorderWindow(4096, () => out++);
    at.forEach(({ index }, seq) => assert.ok(w.push(caseOf({ rank: 1, pass: 0, index, seq }), 1, true)));
    // The first case goes once the window is full (nothing before it says it is first); from there each
    // goes as soon as the one before it has: a handful is held, not the 4,096 a full window keeps.
    assert.ok(at.length - out <= 8, `${at.length - out} cases still held after the last push`);
    assert.ok(w.drain());
    assert.equal(out, at.length);
  });

  it('refuses a repeated key written after its successor went out: the one line that would be misplaced', () => {
    const key = (index: number, seq: number): Line => ({ rank: 1, pass: 0, index, seq });
    const out: string[] = [];
    const w = new ReorderWindow(2, (r) => out.push(r.case_id));
    // 0, 1, 2 fill the window and go (2 as the successor of 1); then key 1 again: it would go after 2.
    assert.ok(w.push(caseOf(key(0, 0)), 1, true));
    assert.ok(w.push(caseOf(key(1, 1)), 1, true));
    assert.ok(w.push(caseOf(key(2, 2)), 1, true));
    assert.deepEqual(out, ['0', '1', '2']);
    assert.ok(w.push(caseOf(key(1, 3)), 1, true));
    assert.equal(w.drain(), false);
  });

  it('says so when a line is further out of place than the window holds', () => {
    for (const big of [false, true]) {
      const file = lines(2000, 200, big);
      const w = new ReorderWindow(16, () => {});
      let ok = true;
      for (const l of file) ok &&= w.push(caseOf(l), rankOf(l), true);
      assert.equal(ok && w.drain(), false, `big ${big}`);
    }
  });
});
