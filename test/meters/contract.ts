/**
 * The Meter contract: the behaviour every meter must show, whatever it measures. Each meter's own
 * test calls `meterContract` with a factory; a case may be skipped only with a reason.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnergyReading, Meter } from '../../src/meters/meter.js';

export interface ContractSubject {
  meter: Meter;
  /** Makes energy flow for about `ms` (advance a fake counter, burn CPU); default: just wait. */
  work?(ms: number): Promise<void>;
  cleanup?(): void | Promise<void>;
}

export type ContractCase =
  | 'probe says available, or why not'
  | 'a reading is labelled and never NaN'
  | 'the total is the sum of the labelled domains'
  | 'a window shorter than the floor is flagged'
  | 'a window longer than the floor is not flagged'
  | 'an outer window holds at least what an inner one does'
  | 'describe is plain JSON naming the meter'
  | 'close ends the meter';

const KNOWN_SOURCES = new Set(['rapl', 'nvml', 'amdsmi', 'powermetrics', 'model:api', 'integrated-power', 'estimate', 'model', 'composite', 'mixed', 'none']);

export function meterContract(
  name: string,
  make: () => Promise<ContractSubject>,
  opts: { skip?: Partial<Record<ContractCase, string>> } = {},
): void {
  const skip = opts.skip ?? {};
  for (const [c, why] of Object.entries(skip)) {
    if (!why || why.trim().length < 5) throw new Error(`${name}: contract case "${c}" skipped without a reason`);
  }
  const caseIt = (c: ContractCase, fn: (s: ContractSubject) => Promise<void>): void => {
    const reason = skip[c];
    it(c, reason ? { skip: reason } : {}, async () => {
      const s = await make();
      try {
        await fn(s);
      } finally {
        await s.meter.close?.();
        await s.cleanup?.();
      }
    });
  };
  const work = (s: ContractSubject, ms: number): Promise<unknown> => (s.work ? s.work(ms) : sleep(ms));

  describe(`Meter contract: ${name}`, () => {
    caseIt('probe says available, or why not', async (s) => {
      const p = await s.meter.probe();
      if (p.available) assert.ok(p.detail === undefined || typeof p.detail === 'string');
      else assert.ok(p.reason.length > 10, 'an unavailable meter says why');
      assert.equal(typeof s.meter.id, 'string');
      assert.ok(s.meter.floor_ms >= 0);
    });

    caseIt('a reading is labelled and never NaN', async (s) => {
      const w = await s.meter.start();
      await work(s, 20);
      const r = await w.stop();
      checkShape(r);
    });

    caseIt('the total is the sum of the labelled domains', async (s) => {
      const w = await s.meter.start();
      await work(s, 20);
      const r = await w.stop();
      const parts = Object.values(r.by_domain);
      if (r.joules !== null && parts.length > 0 && parts.every((p) => p.joules !== null)) {
        const sum = parts.reduce((a, p) => a + (p.joules ?? 0), 0);
        assert.ok(Math.abs(sum - r.joules) < 1e-9, `total ${r.joules} != Σ domains ${sum}`);
      }
      if (parts.some((p) => p.joules === null)) assert.equal(r.joules, null, 'a domain that cannot say makes the total unknown');
    });

    caseIt('a window shorter than the floor is flagged', async (s) => {
      await s.meter.probe(); // auto knows its floor once it has chosen
      assert.ok(s.meter.floor_ms > 0, 'this meter declares no floor');
      const w = await s.meter.start();
      const r = await w.stop();
      // On a loaded machine even an empty window can outlast a 1 ms floor: the flag must then agree
      // with the window it measured. Each meter's own test pins the short case with an injected clock.
      assert.equal(r.below_floor, r.window_ms < s.meter.floor_ms, `window ${r.window_ms} ms, floor ${s.meter.floor_ms} ms`);
    });

    caseIt('a window longer than the floor is not flagged', async (s) => {
      const w = await s.meter.start();
      await work(s, s.meter.floor_ms + 15);
      const r = await w.stop();
      assert.ok(r.window_ms >= s.meter.floor_ms);
      assert.equal(r.below_floor, false);
    });

    caseIt('an outer window holds at least what an inner one does', async (s) => {
      const outer = await s.meter.start();
      await work(s, 10);
      const inner = await s.meter.start();
      await work(s, 20);
      const ri = await inner.stop();
      await work(s, 10);
      const ro = await outer.stop();
      assert.ok(ro.window_ms >= ri.window_ms);
      if (ro.joules !== null && ri.joules !== null) assert.ok(ro.joules >= ri.joules - 1e-9, `outer ${ro.joules} J < inner ${ri.joules} J`);
    });

    caseIt('describe is plain JSON naming the meter', async (s) => {
      await s.meter.probe();
      const d = s.meter.describe();
      assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
      assert.equal(typeof d.meter, 'string');
    });

    caseIt('close ends the meter', async (s) => {
      await s.meter.probe();
      const w = await s.meter.start();
      await w.stop();
      await s.meter.close?.();
      await s.meter.close?.(); // twice is harmless
    });
  });
}

/** The shape every reading has: a known label on it and on each domain, no NaN, no negative window. */
export function checkShape(r: EnergyReading): void {
  assert.ok(KNOWN_SOURCES.has(r.source), `unknown source ${r.source}`);
  assert.ok(r.joules === null || Number.isFinite(r.joules), `joules ${r.joules}`);
  assert.ok(Number.isFinite(r.window_ms) && r.window_ms >= 0);
  assert.equal(typeof r.below_floor, 'boolean');
  for (const [d, v] of Object.entries(r.by_domain)) {
    assert.ok(KNOWN_SOURCES.has(v.source), `${d}: unknown source ${v.source}`);
    assert.ok(v.joules === null || Number.isFinite(v.joules), `${d}: joules ${v.joules}`);
  }
}
