import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LOCAL_OFFSET_TO_UTC, toUtc, TransformCounter } from '../../src/infer/utc.js';

describe('rule 8: local-offset-to-utc', () => {
  it('converts a Go-style local stamp to the same instant, Z-stamped, keeping every fraction digit', () => {
    const r = toUtc('2025-10-17T16:47:07.93355-07:00');
    assert.equal(r.utc, '2025-10-17T23:47:07.93355Z');
    assert.equal(r.converted, true);
    assert.equal(Date.parse(r.utc), Date.parse('2025-10-17T16:47:07.93355-07:00'));
    assert.equal(toUtc('2026-01-01T03:15:00.123456789+05:30').utc, '2025-12-31T21:45:00.123456789Z');
  });
  it('crosses a date line and handles no fraction', () => {
    assert.equal(toUtc('2026-03-01T01:00:00+02:00').utc, '2026-02-28T23:00:00Z');
  });
  it('leaves a Z stamp alone and does not count it', () => {
    const c = new TransformCounter();
    assert.equal(c.utc('2026-01-01T00:00:00.5Z'), '2026-01-01T00:00:00.5Z');
    assert.deepEqual(c.toJSON().counts, { [LOCAL_OFFSET_TO_UTC]: 0 });
  });
  it('counts each conversion under the transform name', () => {
    const c = new TransformCounter();
    c.utc('2026-01-01T00:00:00-07:00');
    c.utc('2026-01-01T00:00:01-07:00');
    c.utc('2026-01-01T00:00:02+00:00');
    assert.deepEqual(c.toJSON(), { counts: { 'local-offset-to-utc': 3 }, source_offsets: ['+00:00', '-07:00'] });
  });
  it('rejects what is not a timestamp', () => {
    assert.throws(() => toUtc('yesterday'), /not an RFC 3339 timestamp/);
  });
});
