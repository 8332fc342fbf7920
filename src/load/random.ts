/**
 * A seeded pseudo-random source, so a seed gives the same schedule on every machine (Math.random cannot be
 * seeded): sfc32 (Doty-Humphrey's Small Fast Counter) seeded through splitmix32 so nearby seeds are unrelated.
 */
interface Rng {
  /** A uniform double in [0, 1). */
  uniform(): number;
}

/** A seeded generator; `seed` is any integer (taken modulo 2^32). */
export function seededRng(seed: number): Rng {
  let s = seed >>> 0;
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix();
  let b = splitmix();
  let c = splitmix();
  let d = splitmix();
  const next32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) next32(); // let the state mix before the first draw
  return {
    // 53 random bits: two draws, as a double in [0, 1).
    uniform: () => ((next32() >>> 5) * 67108864 + (next32() >>> 6)) / 9007199254740992,
  };
}

/** A standard normal draw (Marsaglia's polar method). */
function normal(rng: Rng): number {
  for (;;) {
    const u = 2 * rng.uniform() - 1;
    const v = 2 * rng.uniform() - 1;
    const s = u * u + v * v;
    if (s > 0 && s < 1) return u * Math.sqrt((-2 * Math.log(s)) / s);
  }
}

/**
 * A Gamma(shape, scale) draw (mean shape × scale): Marsaglia & Tsang's method (2000) for shape ≥ 1,
 * and for shape < 1 the boost Gamma(shape) = Gamma(shape + 1) · U^(1/shape).
 */
export function gamma(rng: Rng, shape: number, scale: number): number {
  if (!(shape > 0) || !(scale > 0)) throw new RangeError(`gamma needs shape > 0 and scale > 0, got ${shape}, ${scale}`);
  if (shape < 1) {
    const u = 1 - rng.uniform(); // (0, 1]
    return gamma(rng, shape + 1, scale) * Math.pow(u, 1 / shape);
  }
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng.uniform(); // (0, 1]
    if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * scale;
  }
}
