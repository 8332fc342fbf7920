import { round } from './stats.js';
import type { EnergySource } from './types.js';

/** The carbon intensity a run's energy is converted with. */
export interface GridIntensity {
  g_per_kwh: number;
  /** How it is printed: the figure, and where it came from. */
  label: string;
  /** The region code when taken from the committed table; null when given as a number. */
  region: string | null;
  source: string;
}

/** The report's `co2e` block: net energy × grid intensity. */
export interface Co2e {
  intensity_g_per_kwh: number;
  intensity: string;
  region: string | null;
  /** Always `net`: idle power is not the run's. */
  energy_basis: 'net';
  energy_source: EnergySource;
  grams_total: number | null;
  grams_per_correct: number | null;
  /** When the energy is a modelled range (`model:api`): the range of `grams_per_correct`. */
  grams_per_correct_range?: { low: number; high: number };
}

/** The report fields the conversion reads. */
interface Co2eInput {
  net_joules: number | null;
  net_joules_per_correct: number | null;
  energy_source: EnergySource;
  energy_model_range?: { joules_per_correct: { low: number; high: number } | null };
}

const J_PER_KWH = 3.6e6;

/** gCO₂e from a report's net energy. Pure; null where the energy is null. */
export function co2eOf(report: Co2eInput, grid: GridIntensity): Co2e {
  const grams = (j: number | null): number | null => (j === null ? null : round((j / J_PER_KWH) * grid.g_per_kwh, 9));
  const out: Co2e = {
    intensity_g_per_kwh: grid.g_per_kwh,
    intensity: grid.label,
    region: grid.region,
    energy_basis: 'net',
    energy_source: report.energy_source,
    grams_total: grams(report.net_joules),
    grams_per_correct: grams(report.net_joules_per_correct),
  };
  const r = report.energy_model_range?.joules_per_correct;
  if (r && out.grams_per_correct !== null) out.grams_per_correct_range = { low: grams(r.low)!, high: grams(r.high)! };
  return out;
}
