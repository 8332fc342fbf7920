import { round } from './stats.js';
import type { EnergySource } from './types.js';

/** The local price parts of a run: electricity for its energy, amortised hardware for its wall time. */
export interface LocalPrices {
  electricity_usd_per_kwh?: number;
  hardware_usd_per_hour?: number;
}

/**
 * A run's dollars in parts. `usd_tokens`: Σ the cases' billed cost; `usd_energy`: the report's energy ×
 * $/kWh, labelled with that energy's source (`estimate` says the $ is estimated too); `usd_hardware`:
 * the suite window × $/h. A part without its price, or whose figure is unknown, is null, never 0.
 */
export interface UsdParts {
  usd_tokens: number | null;
  /** `cases`: Σ the case lines' `cost_usd`; null when no case reported a cost. */
  usd_tokens_source: 'cases' | null;
  usd_energy: number | null;
  usd_energy_source: EnergySource | null;
  electricity_usd_per_kwh: number | null;
  usd_hardware: number | null;
  /** `suite_window`: the wall time the report states (`suite_window_ms`). */
  usd_hardware_source: 'suite_window' | null;
  hardware_usd_per_hour: number | null;
}

/** What the parts are computed from. */
interface UsdInput {
  /** Σ case cost; null when unknown. */
  tokens_usd: number | null;
  /** Whether any case reported a cost (tokens are a part of the total only then). */
  tokens_billed: boolean;
  joules: number | null;
  energy_source: EnergySource;
  wall_ms: number | null;
}

const J_PER_KWH = 3.6e6;
const MS_PER_HOUR = 3.6e6;

/** The parts and their total: the sum of every part that is priced, null when any priced part is unknown. Pure. */
export function usdParts(i: UsdInput, p: LocalPrices): { parts: UsdParts; total_usd: number | null } {
  const kwh = p.electricity_usd_per_kwh;
  const hour = p.hardware_usd_per_hour;
  const energy = kwh === undefined || i.joules === null ? null : (i.joules / J_PER_KWH) * kwh;
  const hardware = hour === undefined || i.wall_ms === null ? null : (i.wall_ms / MS_PER_HOUR) * hour;
  const priced = [...(i.tokens_billed ? [i.tokens_usd] : []), ...(kwh !== undefined ? [energy] : []), ...(hour !== undefined ? [hardware] : [])];
  const total = priced.length === 0 || priced.includes(null) ? null : (priced as number[]).reduce((a, b) => a + b, 0);
  return {
    parts: {
      usd_tokens: i.tokens_usd === null ? null : round(i.tokens_usd, 9),
      usd_tokens_source: i.tokens_billed ? 'cases' : null,
      usd_energy: energy === null ? null : round(energy, 9),
      usd_energy_source: energy === null ? null : i.energy_source,
      electricity_usd_per_kwh: kwh ?? null,
      usd_hardware: hardware === null ? null : round(hardware, 9),
      usd_hardware_source: hardware === null ? null : 'suite_window',
      hardware_usd_per_hour: hour ?? null,
    },
    total_usd: total === null ? null : round(total, 9),
  };
}

/** The local prices of several sources (a flag's over a config's), key by key; undefined when none gives any. */
export function localPrices(...sources: (LocalPrices | undefined)[]): LocalPrices | undefined {
  const out: LocalPrices = {};
  for (const k of ['electricity_usd_per_kwh', 'hardware_usd_per_hour'] as const) {
    const v = sources.find((p) => p?.[k] !== undefined)?.[k];
    if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

/** Why a `prices` value (a flag, a config key, a results header's) is not a price: a number >= 0; else null. */
export function localPriceProblem(p: unknown): string | null {
  if (p === null || typeof p !== 'object' || Array.isArray(p)) return 'must be {electricity_usd_per_kwh, hardware_usd_per_hour}';
  for (const [k, v] of Object.entries(p)) {
    if (k !== 'electricity_usd_per_kwh' && k !== 'hardware_usd_per_hour') return `has an unknown key ${k}`;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return `${k} must be a number >= 0`;
  }
  return null;
}
