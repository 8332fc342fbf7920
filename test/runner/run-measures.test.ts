import assert from 'node:assert/strict';
import { test } from 'node:test';
import { combineRunMeasures, runMeasuresLine } from '../../src/runner/run-measures.js';

const window = (joules: number | null, window_ms: number, below_floor = false, source: 'rapl' | 'nvml' = 'rapl') => ({ joules, source, window_ms, below_floor, by_domain: {} });

test('a queued arm run on two workers: suite windows summed (machine time), idle and wall time unknown, never made up', () => {
  const a = runMeasuresLine({ status: 'measured', watts: 10 }, window(30, 2000), 1900);
  const b = runMeasuresLine({ status: 'measured', watts: 12 }, window(12.5, 1000), 950);
  assert.deepEqual(combineRunMeasures([a]), a, 'one worker: its own line');
  assert.deepEqual(combineRunMeasures([a, b]), {
    record: 'run_measures',
    idle: { status: 'unusable', watts: null },
    suite: { joules: 42.5, source: 'rapl', window_ms: 3000, below_floor: false },
    scored_wall_ms: null,
  });
  const low = runMeasuresLine({ status: 'measured', watts: 12 }, window(0.01, 5, true), 5);
  assert.equal(combineRunMeasures([a, low])?.suite, null, 'a window below its floor is not summed');
  const model = runMeasuresLine({ status: 'skipped', watts: null }, window(3, 100, false, 'nvml'), 90);
  assert.equal(combineRunMeasures([a, model])?.suite, null, 'two sources are not summed');
  assert.equal(combineRunMeasures([]), null);
});
