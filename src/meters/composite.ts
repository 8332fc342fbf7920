import type { EnergySource } from '../core/types.js';
import type { EnergyReading, Meter, MeterProbe, MeterWindow } from './meter.js';
import { combineValidity } from './validity.js';

/**
 * Reads several meters over one window, each domain keeping its label; the total is `composite`, `null`
 * when any part could not say. One part's reading passes through unchanged.
 */
export function createCompositeMeter(parts: readonly Meter[], id = parts.map((p) => p.id).join('+')): Meter {
  if (parts.length === 0) throw new RangeError('a composite meter needs at least one part');
  const source: EnergySource = parts.length === 1 ? parts[0]!.source : 'composite';
  return {
    id,
    source,
    floor_ms: Math.max(...parts.map((p) => p.floor_ms)),
    marginal: parts.every((p) => p.marginal === true),
    async probe(): Promise<MeterProbe> {
      const probes = await Promise.all(parts.map((p) => p.probe()));
      const missing = probes.flatMap((p, i) => (p.available ? [] : [`${parts[i]!.id}: ${p.reason}${p.fix ? ` (fix: ${p.fix})` : ''}`]));
      if (missing.length > 0) return { available: false, reason: missing.join('; ') };
      return { available: true, detail: probes.map((p, i) => `${parts[i]!.id}: ${p.available ? (p.detail ?? 'ok') : ''}`).join('; ') };
    },
    async start(): Promise<MeterWindow> {
      const windows = await Promise.all(parts.map((p) => p.start()));
      return {
        async stop(): Promise<EnergyReading> {
          const readings = await Promise.all(windows.map((w) => w.stop()));
          if (readings.length === 1) return readings[0]!;
          return combineReadings(readings, parts.map((p) => p.id));
        },
      };
    },
    describe: () => ({ meter: id, parts: parts.map((p) => p.describe()) }),
    async close() {
      await Promise.all(parts.map((p) => p.close?.()));
    },
  };
}

/** One reading from several, each domain labelled; a domain name two parts share is prefixed by its part. */
export function combineReadings(readings: readonly EnergyReading[], partIds: readonly string[]): EnergyReading {
  const by_domain: EnergyReading['by_domain'] = {};
  const warnings: string[] = [];
  let sum: number | null = 0;
  readings.forEach((r, i) => {
    for (const [d, v] of Object.entries(r.by_domain)) by_domain[d in by_domain ? `${partIds[i]}:${d}` : d] = v;
    if (r.joules === null) sum = null;
    else if (sum !== null) sum += r.joules;
    for (const w of r.warnings ?? []) warnings.push(`${partIds[i]}: ${w}`);
  });
  const reading: EnergyReading = {
    joules: sum,
    source: 'composite',
    by_domain,
    window_ms: Math.max(...readings.map((r) => r.window_ms)),
    below_floor: readings.some((r) => r.below_floor),
  };
  if (warnings.length > 0) reading.warnings = warnings;
  const validity = combineValidity(readings.map((r) => r.validity), partIds);
  if (validity) reading.validity = validity;
  return reading;
}
