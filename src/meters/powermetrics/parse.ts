/** One powermetrics plist sample: Apple silicon's `processor.cpu/gpu/ane_power` (mW) or Intel's `package_watts` (W). */
export interface PowerSample {
  /** Length of the sample, ms (`elapsed_ns` / 1e6). */
  elapsed_ms: number;
  /** Average power over the sample per domain (`cpu`, `gpu`, `ane`, or `package` on Intel), W. */
  watts: Record<string, number>;
}

/** A sample that is not what powermetrics writes: the reading is refused rather than guessed. */
export class PowermetricsParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PowermetricsParseError';
  }
}

type Parse = (xml: string) => unknown;

/** Apple silicon keys under `processor`, mW, and the domain each becomes. */
const APPLE_MW: ReadonlyArray<[key: string, domain: string]> = [
  ['cpu_power', 'cpu'],
  ['gpu_power', 'gpu'],
  ['ane_power', 'ane'],
];

/** Reads one plist document; `parse` is the plist library's, passed in so the import waits for a sample. */
export function parsePowerSample(xml: string, parse: Parse): PowerSample {
  let doc: unknown;
  try {
    doc = parse(xml);
  } catch (e) {
    throw new PowermetricsParseError(`not a plist: ${String((e as Error)?.message ?? e).split('\n')[0]}`);
  }
  if (!isRecord(doc)) throw new PowermetricsParseError('the sample is not a plist dictionary');
  const elapsed_ns = doc.elapsed_ns;
  if (typeof elapsed_ns !== 'number' || !Number.isFinite(elapsed_ns) || elapsed_ns <= 0) {
    throw new PowermetricsParseError(`elapsed_ns must be a number > 0, got ${JSON.stringify(elapsed_ns) ?? 'nothing'}`);
  }
  const proc = doc.processor;
  if (!isRecord(proc)) throw new PowermetricsParseError('the sample has no processor dictionary (was the cpu_power sampler asked for?)');
  const watts: Record<string, number> = {};
  for (const [key, domain] of APPLE_MW) {
    // gpu_power sits under processor on Apple silicon; some macOS releases also repeat it under gpu.
    const v = proc[key] ?? (key === 'gpu_power' && isRecord(doc.gpu) ? doc.gpu[key] : undefined);
    if (v === undefined) continue;
    watts[domain] = power(v, `processor.${key}`, 1e-3) / 1000;
  }
  if (Object.keys(watts).length === 0 && proc.package_watts !== undefined) {
    watts.package = power(proc.package_watts, 'processor.package_watts', 1);
  }
  if (Object.keys(watts).length === 0) throw new PowermetricsParseError('the sample has no power figure (processor.cpu_power / gpu_power / ane_power / package_watts)');
  return { elapsed_ms: elapsed_ns / 1e6, watts };
}

/** No Mac draws this much in one domain (a Mac Pro's supply is 1.4 kW): a larger figure is garbage. */
const MAX_PLAUSIBLE_W = 10_000;

/** A power figure in `unit_w` watts (1e-3 for mW), checked: a number, not negative, plausible. */
function power(v: unknown, key: string, unit_w: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new PowermetricsParseError(`${key} must be a number >= 0, got ${JSON.stringify(v)}`);
  if (v * unit_w > MAX_PLAUSIBLE_W) throw new PowermetricsParseError(`${key} = ${v} is over 10 kW: not a plausible reading`);
  return v;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) && !(v instanceof Uint8Array);
}
