import { JoulebenchError } from '../core/errors.js';

/** The transform name seed 004 rule 8 counts conversions under. */
export const LOCAL_OFFSET_TO_UTC = 'local-offset-to-utc';

const STAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

/** An RFC 3339 timestamp with a numeric offset as the same instant, Z-stamped, its fraction kept digit for digit (Go writes ns). */
export function toUtc(stamp: string): { utc: string; converted: boolean; offset: string } {
  const m = STAMP.exec(stamp.trim());
  if (!m) throw new JoulebenchError('E_INPUT', `not an RFC 3339 timestamp: ${JSON.stringify(stamp)}`);
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  if (zone === 'Z') return { utc: stamp.trim(), converted: false, offset: 'Z' };
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
  const localMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const utcIso = new Date(localMs - offsetMin * 60_000).toISOString(); // whole seconds: ".000Z"
  return { utc: `${utcIso.slice(0, 19)}${frac}Z`, converted: true, offset: zone };
}

/** Counts conversions per transform name, for the receipt. */
export class TransformCounter {
  private readonly counts = new Map<string, number>();
  private readonly offsets = new Set<string>();

  /** A counter that continues from counts written earlier (a resumed run keeps its finished arms' counts). */
  static from(saved: { counts: Record<string, number>; source_offsets: string[] }): TransformCounter {
    const c = new TransformCounter();
    for (const [name, n] of Object.entries(saved.counts)) if (n > 0) c.counts.set(name, n);
    for (const o of saved.source_offsets) c.offsets.add(o);
    return c;
  }

  /** Converts a stamp to UTC and counts it when it moved. */
  utc(stamp: string): string {
    const r = toUtc(stamp);
    if (r.converted) {
      this.counts.set(LOCAL_OFFSET_TO_UTC, (this.counts.get(LOCAL_OFFSET_TO_UTC) ?? 0) + 1);
      this.offsets.add(r.offset);
    }
    return r.utc;
  }

  /** `{ "local-offset-to-utc": n }` (0 when nothing needed converting) and the source offsets seen. */
  toJSON(): { counts: Record<string, number>; source_offsets: string[] } {
    return { counts: { [LOCAL_OFFSET_TO_UTC]: this.counts.get(LOCAL_OFFSET_TO_UTC) ?? 0 }, source_offsets: [...this.offsets].sort() };
  }
}
