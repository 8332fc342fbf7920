import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregate } from '../../src/core/aggregate.js';
import type { CaseResult } from '../../src/core/types.js';
import { renderReportTable } from '../../src/report/table.js';
import { CTX, result } from '../helpers/results.js';

const IDLE = { status: 'measured' as const, watts: 0.001, by_domain_watts: {}, window_ms: 1000, source: 'rapl' as const };

/** The reproduction in small: most cases read 0 J below RAPL's floor, the suite window measured more. */
function belowFloorRun(): CaseResult[] {
  const out: CaseResult[] = [];
  for (let i = 0; i < 10; i++) {
    const below = i < 8;
    out.push(result({ index: i, case_id: `c${i}`, energy_source: 'rapl', joules: below ? 0 : 0.0005, below_floor: below }));
  }
  return out;
}

describe('energy_basis: per-case readings below the floor are never summed as measured zeros', () => {
  it('headline total and J/correct come from the suite window, with the basis and why', () => {
    const r = aggregate(belowFloorRun(), {
      ...CTX,
      meter: 'rapl',
      energy: { idle: IDLE, suite: { joules: 0.0113, source: 'rapl', by_domain: {}, window_ms: 2, below_floor: false } },
    });
    assert.equal(r.format, 'joulebench-report/1.1');
    assert.equal(r.energy_basis, 'suite_window');
    assert.equal(r.total_joules, 0.0113, 'not 0.001, the sum of the case readings');
    assert.equal(r.joules_per_correct, 0.00113);
    assert.equal(r.gross_joules, 0.0113);
    assert.match(r.energy_basis_reason ?? '', /8 of 10 case reading\(s\) below the rapl meter's floor/);
    assert.equal(r.by_dataset.d?.total_joules, null, 'a dataset slice cannot be cut out of the suite window');
    assert.match(renderReportTable(r), /suite window/);
  });

  it('without a usable suite window the total is null (unknown), never the below-floor sum', () => {
    const r = aggregate(belowFloorRun(), { ...CTX, meter: 'rapl' });
    assert.equal(r.energy_basis, 'per_case');
    assert.equal(r.total_joules, null);
    assert.equal(r.joules_per_correct, null);
    assert.match(r.energy_basis_reason ?? '', /total unknown/);
  });

  it('readings above the floor keep the per-case sum, and say so', () => {
    const rs = [result({ joules: 2, energy_source: 'rapl' }), result({ index: 1, joules: 3, energy_source: 'rapl' })];
    const r = aggregate(rs, { ...CTX, meter: 'rapl', energy: { idle: IDLE, suite: { joules: 6, source: 'rapl', by_domain: {}, window_ms: 2000, below_floor: false } } });
    assert.equal(r.energy_basis, 'per_case');
    assert.equal(r.energy_basis_reason, null);
    assert.equal(r.total_joules, 5);
  });

  it('concurrent cases: overlapping windows, so the suite window is the total', () => {
    const rs = [result({ joules: 2, energy_source: 'rapl' }), result({ index: 1, joules: 3, energy_source: 'rapl' })];
    const r = aggregate(rs, {
      ...CTX,
      meter: 'rapl',
      concurrency: 4,
      energy: { idle: IDLE, suite: { joules: 2.5, source: 'rapl', by_domain: {}, window_ms: 1000, below_floor: false } },
    });
    assert.equal(r.energy_basis, 'suite_window');
    assert.equal(r.total_joules, 2.5);
    assert.equal(r.joules_per_correct, 1.25);
  });
});
