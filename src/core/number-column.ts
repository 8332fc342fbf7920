/**
 * A growable column of numbers stored as narrowly as its values allow, every value read back exactly
 * (`Object.is`-equal): `const` (all the same) and `index` (value j is j) store nothing a case, `f32` 4 bytes
 * (values a 32-bit float holds exactly), `f64` 8. A column only widens, copying what it holds once.
 */
export class NumberColumn {
  private mode: 'const' | 'index' | 'f32' | 'f64';
  private n = 0;
  /** The one value of a `const` column (meaningless while n is 0). */
  private c = 0;
  private data: Float32Array | Float64Array | null = null;
  /** The materialised view of a `const`/`index` column, kept until the next push. */
  private cached: ArrayLike<number> & Iterable<number> = new Float64Array(0);
  private cachedN = 0;

  /** `index`: expect value j at position j; `wide`: a `Float64Array` from the start (the reference in tests). */
  constructor(opts: { index?: boolean; wide?: boolean } = {}) {
    this.mode = opts.wide === true ? 'f64' : opts.index === true ? 'index' : 'const';
    if (opts.wide === true) this.data = new Float64Array(1024);
  }

  get length(): number {
    return this.n;
  }

  push(v: number): void {
    const n = this.n;
    switch (this.mode) {
      case 'const':
        if (n === 0) this.c = v;
        else if (!Object.is(v, this.c)) this.widen(v);
        break;
      case 'index':
        if (!(v === n && !Object.is(v, -0))) this.widen(v);
        break;
      case 'f32':
        if (!fitsF32(v)) this.widen(v);
        break;
      case 'f64':
        break;
    }
    if (this.mode === 'f32' || this.mode === 'f64') {
      if (n === this.data!.length) this.data = doubled(this.data!);
      this.data![n] = v;
    }
    this.n = n + 1;
  }

  /** Value j (0 ≤ j < length). */
  at(j: number): number {
    return this.mode === 'const' ? this.c : this.mode === 'index' ? j : this.data![j]!;
  }

  /** Stored bytes (the typed array's capacity; 0 for a `const` or `index` column). */
  get byteLength(): number {
    return this.data === null ? 0 : this.data.byteLength;
  }

  /** How the column is stored (for tests and the bench). */
  get storage(): 'const' | 'index' | 'f32' | 'f64' {
    return this.mode;
  }

  /** The values as a column of exactly `length`: a view of the storage valid until the next push (made on demand for const/index). */
  view(): ArrayLike<number> & Iterable<number> {
    if (this.data !== null) return this.data.subarray(0, this.n);
    if (this.cachedN !== this.n) {
      this.cached = this.mode === 'index' ? indexArray(this.n) : filledArray(this.n, this.c);
      this.cachedN = this.n;
    }
    return this.cached;
  }

  /** Switches to the narrowest stored mode that holds the values so far and `next`. */
  private widen(next: number): void {
    const n = this.n;
    const heldFit = this.mode === 'f32' ? true : this.mode === 'index' ? n === 0 || fitsF32(n - 1) : n === 0 || fitsF32(this.c);
    const f32 = heldFit && fitsF32(next);
    const cap = Math.max(1024, 2 ** Math.ceil(Math.log2(n + 1)));
    const d = f32 ? new Float32Array(cap) : new Float64Array(cap);
    if (this.data !== null) d.set(this.data.subarray(0, n));
    else if (this.mode === 'index') for (let j = 0; j < n; j++) d[j] = j;
    else d.fill(this.c, 0, n);
    this.data = d;
    this.mode = f32 ? 'f32' : 'f64';
    this.cached = new Float64Array(0);
    this.cachedN = 0;
  }
}

/** A growable column of small integers (-128 to 127: flags, or -1, 0, 1): a byte a value. */
export class Int8Column {
  private data = new Int8Array(1024);
  private n = 0;
  get length(): number {
    return this.n;
  }
  push(v: number): void {
    if (this.n === this.data.length) this.data = doubled(this.data);
    this.data[this.n++] = v;
  }
  at(j: number): number {
    return this.data[j]!;
  }
  view(): Int8Array {
    return this.data.subarray(0, this.n);
  }
  get byteLength(): number {
    return this.data.byteLength;
  }
}

/** A typed array of the same kind, twice as long, starting with `d`'s values. */
function doubled<T extends Int8Array | Float32Array | Float64Array>(d: T): T {
  const bigger = new (d.constructor as new (length: number) => T)(d.length * 2);
  bigger.set(d);
  return bigger;
}

/** A 32-bit float holds v exactly (NaN, ±0 and ±Infinity included). */
function fitsF32(v: number): boolean {
  return Object.is(Math.fround(v), v);
}

function indexArray(n: number): Uint32Array | Float64Array {
  const a = n <= 2 ** 32 ? new Uint32Array(n) : new Float64Array(n);
  for (let j = 0; j < n; j++) a[j] = j;
  return a;
}

/** n copies of c in the narrowest typed array that reads c back exactly. */
function filledArray(n: number, c: number): Uint8Array | Int8Array | Float32Array | Float64Array {
  if (Number.isInteger(c) && !Object.is(c, -0)) {
    if (c >= 0 && c <= 255) return new Uint8Array(n).fill(c);
    if (c >= -128 && c <= 127) return new Int8Array(n).fill(c);
  }
  return fitsF32(c) ? new Float32Array(n).fill(c) : new Float64Array(n).fill(c);
}

/**
 * Nearest-rank percentiles of the column's values that are not NaN, followed by `nanTail` NaNs (sorted
 * last); whole values in a narrow range are counted rather than sorted. `null` for each when there are none.
 */
export function nearestRanks(col: NumberColumn, ps: readonly number[], nanTail = 0): (number | null)[] {
  if (col.storage === 'const') {
    // Every value is the same one: no need to look at them (nor to materialise them).
    const c = col.at(0);
    const known = col.length === 0 || c !== c ? 0 : col.length;
    const all = known + nanTail;
    return ps.map((p) => (all === 0 ? null : Math.max(1, Math.ceil((p / 100) * all - 1e-9)) > known ? NaN : c));
  }
  const v = col.view();
  const n = v.length;
  let m = 0;
  let max = 0;
  let countable = true;
  for (let i = 0; i < n; i++) {
    const x = v[i]!;
    if (x !== x) continue;
    m++;
    if (countable && !(x >= 0 && x === Math.floor(x))) countable = false;
    if (x > max) max = x;
  }
  const total = m + nanTail;
  const ranks = ps.map((p) => {
    if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
    // Rank ceil(p/100 × N), 1-based; the epsilon guards 0.95*20 = 19.000000000000004.
    return Math.max(1, Math.ceil((p / 100) * total - 1e-9));
  });
  if (total === 0) return ps.map(() => null);
  if (countable && max <= 4 * m + 1024) {
    const counts = new Uint32Array(max + 1);
    for (let i = 0; i < n; i++) {
      const x = v[i]!;
      if (x === x) counts[x]!++;
    }
    return ranks.map((rank) => {
      if (rank > m) return NaN;
      let seen = 0;
      for (let x = 0; x <= max; x++) if ((seen += counts[x]!) >= rank) return x;
      return NaN;
    });
  }
  const Ctor = (v as unknown as { constructor: new (k: number) => Float32Array | Float64Array }).constructor;
  const sorted = (typeof Ctor === 'function' && ArrayBuffer.isView(v) ? new Ctor(m) : new Float64Array(m)) as Float64Array;
  for (let i = 0, k = 0; i < n; i++) {
    const x = v[i]!;
    if (x === x) sorted[k++] = x;
  }
  sorted.sort();
  return ranks.map((rank) => (rank > m ? NaN : sorted[rank - 1]!));
}
