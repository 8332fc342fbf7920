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

/** Case lines in case order, each written up to `late` places later; keys packed or not (a pass ≥ 1024, an index ≥ 2^41). */
function lines(n: number, late: number, big: boolean): Line[] {
  const sorted: Line[] = [];
  for (let i = 0; i < n; i++) {
    const rank = i < n / 10 ? 0 : 1;
    const pass = big && i % 7 === 0 ? 1024 + (i >> 4) : i >> 6;
    sorted.push({ rank, pass, index: big && i % 5 === 0 ? 2 ** 41 + i : i % 64, seq: 0 });
  }
  // A repeated key (a resumed file): file order decides.
  sorted.splice(n >> 1, 0, { ...sorted[n >> 1]! });
  const at = stable(sorted.map((l, i) => ({ ...l, seq: i }))).map((l, i) => ({ l, t: i + rng.below(late + 1) }));
  return at.sort((a, b) => a.t - b.t).map(({ l }, seq) => ({ ...l, seq }));
}

describe('ReorderWindow: a nearly ordered stream back in case order', () => {
  it('restores case order (stable for a repeated key) when no line is more than the window late', () => {
    for (const big of [false, true]) {
      for (const [late, size] of [[0, 1], [5, 8], [31, 32], [100, 4096]] as const) {
        const file = lines(3000, late, big);
        const out: string[] = [];
        const w = new ReorderWindow(size, (r) => out.push(r.case_id));
        // Alternate copied (the scanner's reused object) and held-as-is lines; mutate the source after a copy.
        for (const l of file) {
          const r = caseOf(l);
          assert.ok(w.push(r, rankOf(l), l.seq % 2 === 0), `late ${late}, window ${size}`);
          if (l.seq % 2 === 0) {
            r.case_id = 'overwritten';
            r.trace![0]!.energy_uj = -1;
          }
        }
        assert.ok(w.drain());
        assert.deepEqual(out, stable(file).map((l) => String(l.seq)), `late ${late}, window ${size}, big ${big}`);
      }
    }
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
