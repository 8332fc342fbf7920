import { Int8Column, NumberColumn } from '../core/number-column.js';
import type { PairedCase } from './paired.js';

// Per-case flags: passed (2 bits: 0 null, 1 false, 2 true), then which figures are unknown (null).
const PASSED_MASK = 3;
const JOULES_NULL = 4;
const USD_NULL = 8;
const LATENCY_NULL = 16;

/** Pass numbers below this keep `pass × 2^32 + index` an exact double (2^20 · 2^32 < 2^53). */
export const MAX_PAIRED_PASS = 2 ** 20;

/** One run's scored cases ({@link PairedCase}) as columns; keys are numbers ({@link pairKey}, else {@link KeyTable}'s). */
export class PairedColumns {
  readonly key = new NumberColumn({ index: true });
  readonly unit = new NumberColumn({ index: true });
  readonly weight = new NumberColumn();
  /** Unknown figures are stored as 0 and flagged: null and NaN stay apart. */
  readonly joules = new NumberColumn();
  readonly usd = new NumberColumn();
  readonly latency_ms = new NumberColumn();
  private readonly flagBytes = new Int8Column();

  get length(): number {
    return this.flagBytes.length;
  }

  /** The flags of row j (see the masks above). */
  flags(j: number): number {
    return this.flagBytes.at(j);
  }

  /** A scored case of pass `pass` at suite position `index` (a results line's own fields). */
  pushCase(pass: number, index: number, passed: boolean | null, weight: number, joules: number | null, usd: number | null, latency_ms: number | null): void {
    this.pushKeyed(pairKey(pass, index), index, passed, weight, joules, usd, latency_ms);
  }

  /** A row with its numeric key (see the class comment) and resampling unit. */
  pushKeyed(key: number, unit: number, passed: boolean | null, weight: number, joules: number | null, usd: number | null, latency_ms: number | null): void {
    // Keys are compared and sorted as numbers: only whole ones held exactly pair reliably.
    if (!Number.isSafeInteger(key)) throw new RangeError(`paired case: key ${key} is not a whole number below 2^53`);
    let f = passed === null ? 0 : passed ? 2 : 1;
    if (joules === null) f |= JOULES_NULL;
    if (usd === null) f |= USD_NULL;
    if (latency_ms === null) f |= LATENCY_NULL;
    this.flagBytes.push(f);
    this.key.push(key);
    this.unit.push(unit);
    this.weight.push(weight);
    this.joules.push(joules ?? 0);
    this.usd.push(usd ?? 0);
    this.latency_ms.push(latency_ms ?? 0);
  }

  /** Row j as a {@link PairedCase} (tests; `key` in the `"pass:index"` form when it was made from one). */
  at(j: number, keys?: KeyTable): PairedCase {
    const f = this.flagBytes.at(j);
    const p = f & PASSED_MASK;
    return {
      key: keyText(this.key.at(j), keys),
      unit: this.unit.at(j),
      passed: p === 0 ? null : p === 2,
      weight: this.weight.at(j),
      joules: f & JOULES_NULL ? null : this.joules.at(j),
      usd: f & USD_NULL ? null : this.usd.at(j),
      latency_ms: f & LATENCY_NULL ? null : this.latency_ms.at(j),
    };
  }

  /** Bytes held (for the bench and tests). */
  get byteLength(): number {
    return this.flagBytes.byteLength + this.key.byteLength + this.unit.byteLength + this.weight.byteLength + this.joules.byteLength + this.usd.byteLength + this.latency_ms.byteLength;
  }

  /** Cases as objects, into columns; `keys` numbers key strings not of the `"pass:index"` form (share it between the two sides). */
  static of(cases: readonly PairedCase[], keys: KeyTable): PairedColumns {
    const out = new PairedColumns();
    for (const c of cases) out.pushKeyed(keys.number(c.key), c.unit, c.passed, c.weight, c.joules, c.usd, c.latency_ms);
    return out;
  }
}

export const PAIRED_FLAGS = { PASSED_MASK, JOULES_NULL, USD_NULL, LATENCY_NULL } as const;

/** `pass × 2^32 + index`: the numeric form of the key `"pass:index"`. */
function pairKey(pass: number, index: number): number {
  if (!(Number.isInteger(pass) && pass >= 0 && pass < MAX_PAIRED_PASS && Number.isInteger(index) && index >= 0 && index < 2 ** 32)) {
    throw new RangeError(`paired case: pass ${pass} and index ${index} must be whole numbers below ${MAX_PAIRED_PASS} and 2^32`);
  }
  return pass * 2 ** 32 + index;
}

/** Numbers for key strings: `"pass:index"` as {@link pairKey} gives it, any other string a negative number of its own. */
export class KeyTable {
  private readonly others = new Map<string, number>();
  private readonly names: string[] = [];

  number(key: string): number {
    const m = /^(0|[1-9][0-9]{0,6}):(0|[1-9][0-9]{0,9})$/.exec(key);
    if (m) {
      const pass = Number(m[1]);
      const index = Number(m[2]);
      if (pass < MAX_PAIRED_PASS && index < 2 ** 32) return pass * 2 ** 32 + index;
    }
    let k = this.others.get(key);
    if (k === undefined) {
      this.names.push(key);
      k = -this.names.length;
      this.others.set(key, k);
    }
    return k;
  }

  /** The string a negative key number was given for. */
  name(k: number): string | undefined {
    return this.names[-k - 1];
  }
}

function keyText(k: number, keys: KeyTable | undefined): string {
  if (k < 0) return keys?.name(k) ?? String(k);
  return `${Math.floor(k / 2 ** 32)}:${k % 2 ** 32}`;
}
